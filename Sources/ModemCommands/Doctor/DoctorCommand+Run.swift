import Bearers
import CellpathCLI
import CellpathCore
import CommandLineKit
import ModemDiscovery
import ModemManagerBackend
import Modems
import SystemSupport

extension DoctorCommand {
    /// Runs every check (changing nothing unless --fix) and reports them; exit 1 when one failed.
    static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let selector = try ModemSelector.named(options.modem, command: context.command)
        let disclosure = context.global.disclosure
        if let capture = options.capture {
            try OutputFile.checkWritable(capture, option: "--capture", as: context.caller)
        }
        var checks = MachineChecks.configuration(context)
        checks.append(MachineChecks.clock())
        checks.append(MachineChecks.capabilities())

        context.progress.step("finding the modems")
        let modemManager = await ModemManagerService.isRunning(logger: context.logger)
        var (discovery, reader) = ModemsCommand.setUp(options.backend, timeout: options.timeout, context)
        reader.readsFirmwareTraits = options.capture != nil
        let found = discovery.modems()
        var reports = await ModemsCommand.read(found, with: reader, context)
        if let selector {
            reports = reports.filter { selector.matches($0.modem, $0.status) }
            guard !reports.isEmpty || found.isEmpty else {
                throw UsageError("no modem matches '\(options.modem ?? "")'", command: context.command)
            }
        }
        if selector == nil { checks += DeviceShapeChecks.all(discovery.roots) }
        if found.isEmpty {
            let none = ModemListing.noModem(discovery.roots)
            checks.append(DoctorCheck("modems", .fail, none.message, remedy: none.hint))
        }
        let records = BearerRecords(environment: context.environment)
        for report in reports {
            var modemChecks = ModemChecks(
                report: report, roots: discovery.roots, disclosure: disclosure,
                modemManager: modemManager, records: records, fix: options.fix)
            var findings = modemChecks.all()
            if options.fix && modemChecks.staleRecord, let index = findings.firstIndex(where: { $0.name == "bearer" }) {
                findings[index] = await removeStaleRecord(findings[index], report.modem, records, context)
            }
            checks += findings
            if let path = modemChecks.usablePath {
                checks.append(
                    await NetworkChecks.dnsThroughBearer(
                        path, modem: report.modem.index, context,
                        timeout: options.timeout))
            }
        }
        checks.append(await NetworkChecks.backendReachability(context, timeout: options.timeout))
        if let capture = options.capture {
            let text = DoctorCapture(roots: discovery.roots, modemManager: modemManager).json(reports, disclosure)
            try OutputFile.write(Array(text.utf8), to: capture, as: context.caller)
            let redaction =
                disclosure == .full
                ? "personal data included (--verbose-full)"
                : "personal data replaced by placeholders"
            checks.append(
                DoctorCheck(
                    "capture", .pass, "snapshot of \(reports.count) modem(s) written to \(capture)",
                    evidence: [redaction, "mode 0600"]))
        }
        let doctor = DoctorReport(checks)
        return CommandOutcome(doctor.output, exitCode: doctor.exitCode)
    }

    /// `--fix` of a record whose bearer the modem reports down: the existing teardown, without
    /// the modem (nothing to disconnect), under the modem's lock; `check` says what it changed.
    static func removeStaleRecord(
        _ check: DoctorCheck, _ modem: DiscoveredModem, _ records: BearerRecords,
        _ context: CommandContext
    ) async -> DoctorCheck {
        var fixed = check
        guard Capability.netAdmin.isEffective else {
            fixed.remedy = "run cellpath doctor --fix with sudo"
            return fixed
        }
        let logger = context.logger.scoped("modem\(modem.index)")
        do throws(CellpathError) {
            let lock = try await ModemLock.acquire(modem, in: records, purpose: "doctor --fix", wait: .seconds(5))
            defer { lock.release() }
            let teardown = BearerTeardown(modem: modem, records: records, logger: logger)
            let (result, removed) = try await teardown.run(force: false, on: nil)
            if case .inUse(let pids) = result {
                fixed.evidence.append("in use by cellpath processes \(pids.map(String.init).joined(separator: ", "))")
                return fixed
            }
            fixed.status = .pass
            fixed.remedy = nil
            fixed.summary = "the bearer is down: cellpath's stale record was removed"
            fixed.fixed =
                "removed cellpath's record of the bearer"
                + (removed ? " and its configuration of \(modem.interfaces.first ?? "the interface")" : "")
        } catch {
            fixed.evidence.append("--fix failed: \(error.message)")
        }
        return fixed
    }
}
