import CellpathCLI
import CommandLineKit
import Configuration
import Glibc
import SystemSupport

/// The checks of the machine itself: the configuration, the clock, the caller's capabilities.
enum MachineChecks {
    /// The configuration files read and whether a backend and credentials are configured (never their values).
    static func configuration(_ context: CommandContext) -> [DoctorCheck] {
        let configuration: EffectiveConfiguration
        do {
            configuration = try ConfigurationLoader(environment: context.environment, caller: context.caller).load()
        } catch {
            return [
                DoctorCheck(
                    "configuration", .fail, error.message,
                    remedy: error.hint ?? "see cellpath config show")
            ]
        }
        var evidence = configuration.files.map { "\($0.role.rawValue) file \($0.path): \(describe($0.status))" }
        let unusable = configuration.entries.filter { $0.error != nil }.map(\.key)
        var status = DoctorCheck.Status.pass
        var remedies: [String] = []
        let troubled = configuration.files.contains { file in
            switch file.status {
            case .loaded, .missing: false
            case .unreadable, .invalid: true
            }
        }
        if troubled {
            status = .warn
            remedies.append("fix or remove the file named above")
        }
        if !unusable.isEmpty {
            status = .fail
            evidence.append("unusable settings: \(unusable.joined(separator: ", "))")
            remedies.append("see cellpath config show")
        }
        evidence += configuration.warnings
        let credentials = (try? configuration.credentials) ?? nil
        let server = (try? configuration.serverBaseURL) ?? nil
        evidence.append("tru.ID credentials: " + (credentials.map { "present (from \($0.clientIDOrigin))" } ?? "none"))
        evidence.append("development server: \(server ?? "none")")
        if credentials == nil && server == nil {
            status = max(status, .warn)
            remedies.append(
                "configure tru.ID credentials (--tru-json, CELLPATH_CLIENT_ID and CELLPATH_CLIENT_SECRET) "
                    + "or a development server (CELLPATH_SERVER_URL): see docs/configuration.md")
        }
        let summary = status == .pass ? "configuration read" : "configuration needs attention"
        return [
            DoctorCheck(
                "configuration", status, summary, evidence: evidence,
                remedy: remedies.isEmpty ? nil : remedies.joined(separator: "; "))
        ]
    }

    private static func describe(_ status: ConfigurationFile.Status) -> String {
        switch status {
        case .loaded: "loaded"
        case .missing: "missing"
        case .unreadable(let reason): "unreadable: \(reason)"
        case .invalid(let reason): "invalid: \(reason)"
        }
    }

    /// The clock TLS certificates are checked against: obviously wrong (before 2024) fails;
    /// not synchronised (the kernel's adjtimex state) warns.
    static func clock(
        year: Int = HostProbes.currentYear(),
        synchronised: Bool? = HostProbes.clockSynchronised()
    ) -> DoctorCheck {
        let evidence = [
            "system clock year (UTC): \(year)",
            "synchronised: \(synchronised.map { $0 ? "yes" : "no" } ?? "unknown")"
        ]
        if year < 2024 {
            return DoctorCheck(
                "clock", .fail, "the system clock is wrong: TLS certificates will not verify",
                evidence: evidence, remedy: "set the clock (timedatectl set-ntp true, or date -s)")
        }
        if synchronised == false {
            return DoctorCheck(
                "clock", .warn, "the system clock is not synchronised", evidence: evidence,
                remedy: "enable time synchronisation: timedatectl set-ntp true")
        }
        return DoctorCheck("clock", .pass, "the system clock looks right", evidence: evidence)
    }

    /// CAP_NET_ADMIN (configuring the bearer's interface) and CAP_NET_RAW of the caller.
    static func capabilities(
        _ capabilities: UInt64? = Capability.effectiveSet,
        uid: uid_t = getuid()
    ) -> DoctorCheck {
        let admin = (capabilities ?? 0) & Capability.netAdmin.mask != 0
        let raw = (capabilities ?? 0) & Capability.netRaw.mask != 0
        let evidence = [
            "uid \(uid)", "CapEff \(capabilities.map { String($0, radix: 16) } ?? "unreadable")",
            "CAP_NET_ADMIN: \(admin ? "yes" : "no")", "CAP_NET_RAW: \(raw ? "yes" : "no")"
        ]
        guard admin else {
            return DoctorCheck(
                "capabilities", .warn,
                "no CAP_NET_ADMIN: bearer up and down, and checks that bring a bearer up, "
                    + "will be refused",
                evidence: evidence,
                remedy: "run cellpath with sudo, or join the cellpath group and run "
                    + "sudo make install-capability "
                    + "(docs/operations.md)")
        }
        return DoctorCheck("capabilities", .pass, "CAP_NET_ADMIN present", evidence: evidence)
    }
}
