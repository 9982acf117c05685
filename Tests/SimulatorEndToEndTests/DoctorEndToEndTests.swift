import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// `cellpath doctor` in the simulated world: healthy with a bearer cellpath brought up, then on a
/// machine broken on purpose — strict rp_filter (failed with its remedy; --fix restores it, says
/// so and changes nothing else), a missing source rule while cellpath's record exists, a bearer
/// another program configured, and a caller without privilege — each finding and remedy
/// asserted, and every report's `--json` shape; on the zoo; with ModemManager owning the modem.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct DoctorEndToEndTests {
    /// `cellpath doctor -m 0 --json ARGS…` on the device: its exit status and checks by name.
    private static func doctor(
        _ device: SimulatedDevice, _ arguments: [String] = []
    )
        throws -> (status: Int32, json: JSONValue, checks: [String: JSONValue], stderr: String)
    {
        let result = try device.cellpath(["doctor", "-m", "0", "--json"] + arguments)
        let json = try JSONValue.parse(result.stdout)
        expectShape(json, status: result.status)
        var checks: [String: JSONValue] = [:]
        for check in json["checks"]?.array ?? [] {
            if let name = check["check"]?.string { checks[name] = check }
        }
        return (result.status, json, checks, result.stderr)
    }

    @Test func healthyThenBrokenOnPurpose() throws {
        try SimulatedDevice.with(connect: false) { device in
            let up = try device.cellpath(["bearer", "up", "-m", "0", "--json"])
            try #require(up.status == 0, "\(up.stderr)")

            // Healthy: nothing fails, and the checks that matter pass.
            let start = ContinuousClock.now
            let healthy = try Self.doctor(device)
            let elapsed = ContinuousClock.now - start
            #expect(healthy.status == 0, "\(healthy.json)\n\(healthy.stderr)")
            #expect(healthy.json["status"]?.string != "fail")
            for name in [
                "modem", "owners", "access", "read", "radio", "sim", "registration", "bearer", "interface",
                "routing", "rp_filter", "ipv6", "dns", "backend", "capabilities", "configuration"
            ] {
                #expect(healthy.checks[name]?["status"]?.string == "pass", "\(name): \(healthy.checks[name] ?? .null)")
            }
            // The host's clock is the test machine's: right, synchronised or not.
            #expect(["pass", "warn"].contains(healthy.checks["clock"]?["status"]?.string))
            let owners = healthy.checks["owners"]?["evidence"]?.array?.compactMap(\.string) ?? []
            #expect(owners.contains { $0.hasSuffix("the simulated modem") }, "\(owners)")
            #expect(healthy.checks["bearer"]?["summary"]?.string == "connected by cellpath")
            let backend = healthy.checks["backend"]?["evidence"]?.array?.compactMap(\.string) ?? []
            #expect(backend.contains { $0.contains("on wlan0") }, "over the default network: \(backend)")
            #expect(healthy.checks["modem"]?["evidence"]?.array?.contains(.string("net devices: wwan0")) == true)
            // The ICCID only with --verbose-full.
            let full = try Self.doctor(device, ["--verbose-full"])
            let simEvidence = full.checks["sim"]?["evidence"]?.array?.compactMap(\.string) ?? []
            let iccidLine = simEvidence.first { $0.hasPrefix("ICCID: ") }
            let iccid = try #require(iccidLine?.dropFirst("ICCID: ".count))
            let redacted = try device.cellpath(["doctor", "-m", "0", "--json"]).stdout
            #expect(iccid.count >= 18 && !redacted.contains(iccid), "\(iccid) in \(redacted)")
            print("doctor in the world took \(elapsed)")

            // --capture: a snapshot with placeholders for personal data, mode 0600, never through a link.
            let capture = "/tmp/\(device.prefix)doctor-capture.json"
            defer { unlink(capture); unlink(capture + ".link") }
            let captured = try device.cellpath(["doctor", "-m", "0", "--capture", capture, "--json"])
            #expect(captured.status == 0, "\(captured.stderr)")
            let snapshot = try device.run(["cat", capture]).stdout
            #expect(snapshot.contains("<iccid-1>") && snapshot.contains("<imei-1>"))
            #expect(!snapshot.contains(String(iccid)))
            #expect(!snapshot.contains("100.64.23.10"), "the bearer's address replaced")
            let modem = try #require(try JSONValue.parse(snapshot)["modems"]?.array?.first)
            #expect(modem["report"]?["usb"]?["vendor_id"]?.string == "1199")
            guard case .object(let trees)? = modem["sysfs"] else { Issue.record("no sysfs in \(modem)"); return }
            #expect(trees.contains { $0.1["attributes"]?["idVendor"]?.string == "1199" }, "\(trees.map(\.0))")
            var info = stat()
            #expect(stat(capture, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(symlink("/tmp/\(device.prefix)elsewhere", capture + ".link") == 0)
            let refused = try device.cellpath(["doctor", "-m", "0", "--capture", capture + ".link"])
            #expect(refused.status == 73, "\(refused.stderr)")
            #expect(access("/tmp/\(device.prefix)elsewhere", F_OK) != 0, "nothing written through the link")

            // Strict rp_filter on the bearer interface: failed with the remedy, repaired by --fix.
            // The kernel applies the larger of `all` and the interface's: the world's `all` is loose.
            #expect(try device.run(["sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=0"]).status == 0)
            #expect(try device.run(["sysctl", "-q", "-w", "net.ipv4.conf.wwan0.rp_filter=1"]).status == 0)
            let strict = try Self.doctor(device)
            #expect(strict.status == 1)
            #expect(strict.checks["rp_filter"]?["status"]?.string == "fail")
            #expect(strict.checks["rp_filter"]?["remedy"]?.string?.contains("cellpath doctor --fix") == true)
            #expect(try Self.rpFilter(device) == "1", "doctor changes nothing without --fix")
            let before = try Self.machineState(device)
            let fixed = try Self.doctor(device, ["--fix"])
            #expect(fixed.status == 0, "\(fixed.json)")
            #expect(fixed.checks["rp_filter"]?["fixed"]?.string == "net.ipv4.conf.wwan0.rp_filter: 1 → 2")
            #expect(try Self.rpFilter(device) == "2")
            // --fix loosened rp_filter and changed nothing else.
            let fixedChecks = fixed.checks.filter { $0.value["fixed"] != .null }.map(\.key)
            #expect(fixedChecks == ["rp_filter"], "\(fixedChecks)")
            let afterFix = try Self.machineState(device)
            let changed = Set(before).symmetricDifference(afterFix).sorted()
            #expect(
                changed == ["net.ipv4.conf.wwan0.rp_filter = 1", "net.ipv4.conf.wwan0.rp_filter = 2"], "\(changed)")

            // The source rule gone while cellpath's record remains.
            let rules = try device.run(["ip", "-4", "rule"]).stdout.split(separator: "\n")
            let rule = try #require(rules.first { $0.contains("from 100.64.23.10 lookup") })
            let priority = String(rule.prefix { $0 != ":" })
            #expect(try device.run(["ip", "-4", "rule", "del", "priority", priority]).status == 0)
            let noRule = try Self.doctor(device)
            #expect(noRule.status == 1)
            #expect(noRule.checks["routing"]?["status"]?.string == "fail")
            #expect(
                noRule.checks["routing"]?["summary"]?.string?.contains("the rule from 100.64.23.10 lookup") == true,
                "\(noRule.checks["routing"] ?? .null)")
            #expect(noRule.checks["routing"]?["remedy"]?.string?.contains("cellpath bearer down") == true)

            // The modem's bearer disconnected behind cellpath's back (mbimcli): its record is stale,
            // and --fix removes it through the teardown.
            let modems = try JSONValue.parse(try device.cellpath(["modems", "--json"]).stdout)
            let port = try #require(modems["modems"]?.array?.first?["device"]?.string)
            #expect(try device.run(["mbimcli", "-p", "-d", port, "--disconnect"]).status == 0)
            let stale = try Self.doctor(device)
            #expect(stale.status == 1)
            let staleSummary = stale.checks["bearer"]?["summary"]?.string
            #expect(staleSummary == "the bearer is down but cellpath's record of it remains")
            #expect(stale.checks["bearer"]?["remedy"]?.string?.contains("cellpath doctor --fix") == true)
            let removed = try Self.doctor(device, ["--fix"])
            #expect(removed.checks["bearer"]?["status"]?.string == "pass", "\(removed.checks["bearer"] ?? .null)")
            let removal = removed.checks["bearer"]?["fixed"]?.string ?? ""
            #expect(removal.hasPrefix("removed cellpath's record of the bearer"), "\(removal)")
            let after = try Self.doctor(device)
            #expect(after.checks["bearer"]?["evidence"]?.array?.contains(.string("cellpath record: none")) == true)
            #expect(after.checks["interface"]?["status"]?.string == "pass", "configuration removed with the record")

            // A stale configuration another program left (the world's own hook configures wwan0
            // while the modem's bearer is down): addresses cellpath did not put there.
            #expect(try device.cellpath(["bearer", "down", "-m", "0"]).status == 0)
            let clean = try Self.doctor(device)
            #expect(clean.checks["interface"]?["status"]?.string == "pass", "\(clean.checks["interface"] ?? .null)")
            try device.bearer(connect: true)
            let foreign = try Self.doctor(device)
            #expect(foreign.checks["bearer"]?["evidence"]?.array?.contains(.string("cellpath record: none")) == true)
            #expect(foreign.checks["interface"]?["status"]?.string == "warn")
            #expect(
                foreign.checks["interface"]?["summary"]?.string?.contains("cellpath did not put there") == true,
                "\(foreign.checks["interface"] ?? .null)")
            #expect(foreign.checks["interface"]?["remedy"]?.string?.contains("bearer down --force") == true)

            // Without privilege: warnings with their remedies, no crash.
            let nobody = try device.run([
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                CellpathBinary.path, "doctor", "-m", "0", "--json"
            ])
            let unprivileged = try JSONValue.parse(nobody.stdout)
            Self.expectShape(unprivileged, status: nobody.status)
            #expect([0, 1].contains(nobody.status), "\(nobody.status): \(nobody.stderr)")
            let checks = unprivileged["checks"]?.array ?? []
            let capabilities = checks.first { $0["check"]?.string == "capabilities" }
            #expect(capabilities?["status"]?.string == "warn")
            #expect(capabilities?["remedy"]?.string?.contains("sudo") == true)
            let access = checks.first { $0["check"]?.string == "access" }
            #expect(
                access?["status"]?.string == "warn" && access?["remedy"]?.string?.contains("group") == true,
                "\(access ?? .null)")
        }
    }

    /// The zoo (scripts/zoo-scenario.json): the L850 named as unsupported hardware with the
    /// reason, the HiLink stick as a router-mode modem, the EM7455's radio state with its id
    /// checked against ModemManager's FCC-unlock list; the exit status follows the report's.
    @Test func onTheZoo() throws {
        let scenario = try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json")
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try device.cellpath(["doctor", "--json"])
            let json = try JSONValue.parse(result.stdout)
            let checks = json["checks"]?.array ?? []
            Self.expectShape(json, status: result.status)
            let named = { (name: String) in checks.filter { $0["check"]?.string == name } }
            let modem = { (id: String) in
                named("modem").first { $0["evidence"]?.array?.contains(.string("id: \(id)")) == true }?["modem"]
            }

            let unsupported = try #require(named("unsupported").first, "\(result.stdout)")
            #expect(unsupported["status"]?.string == "warn")
            #expect(unsupported["summary"]?.string?.contains("XMM7360 (L850)") == true)
            #expect(unsupported["evidence"]?.array?.contains { $0.string?.contains("(XMMRPC)") == true } == true)
            #expect(unsupported["evidence"]?.array?.contains(.string("id: 8086:7360")) == true, "\(unsupported)")
            #expect(unsupported["remedy"]?.string?.contains("MBIM or QMI") == true)

            let router = try #require(named("router_mode").first, "\(result.stdout)")
            #expect(router["summary"]?.string?.contains("router mode (cdc_ether)") == true, "\(router)")
            #expect(router["evidence"]?.array?.contains(.string("id: 12d1:14dc")) == true, "\(router)")
            #expect(router["remedy"]?.string?.contains("--allow-any-interface") == true)

            // The FCC-locked EM7455: its radio off, an FCC lock when its id is on ModemManager's
            // FCC-unlock list (the remedy enables ModemManager's unlock), else a warning.
            let em7455 = try #require(modem("1199:9079"), "\(result.stdout)")
            let radio = try #require(named("radio").first { $0["modem"] == em7455 })
            let evidence = radio["evidence"]?.array?.compactMap(\.string) ?? []
            #expect(evidence.contains("radio: off"), "\(radio)")
            let listed = access("/usr/share/ModemManager/fcc-unlock.available.d/1199:9079", F_OK) == 0
            let listing = "1199:9079 \(listed ? "is" : "is not") on ModemManager's FCC-unlock list"
            #expect(evidence.contains { $0.hasPrefix(listing) }, "\(evidence)")
            #expect(radio["status"]?.string == (listed ? "fail" : "warn"), "\(radio)")
            let fccRemedy = radio["remedy"]?.string ?? ""
            if listed {
                #expect(radio["summary"]?.string?.contains("ships FCC-locked") == true, "\(radio)")
                #expect(
                    fccRemedy.contains("fcc-unlock.d") && fccRemedy.contains("restart ModemManager"), "\(fccRemedy)")
            } else {
                #expect(fccRemedy.contains("FCC-locked"), "\(fccRemedy)")
            }

            // The MC7455 refuses SIM requests on DMS: the SIM unreported, with the command that asks.
            let mc7455 = try #require(modem("1199:9071"), "\(result.stdout)")
            if let sim = named("sim").first(where: { $0["modem"] == mc7455 }), sim["status"]?.string == "warn" {
                #expect(sim["remedy"]?.string?.contains("qmicli -p -d ") == true, "\(sim)")
                #expect(sim["remedy"]?.string?.hasSuffix(" --uim-get-card-status") == true, "\(sim)")
            }

            // The EC25: qmi_wwan in 802.3 mode while its firmware sends raw IP.
            let ec25 = try #require(modem("2c7c:0125"), "\(result.stdout)")
            let format = try #require(named("data_format").first { $0["modem"] == ec25 }, "\(result.stdout)")
            #expect(format["status"]?.string == "warn", "\(format)")
            #expect(format["summary"]?.string?.contains("expects 802.3 frames") == true, "\(format)")
            #expect(
                format["evidence"]?.array?.contains { $0.string?.hasSuffix("/qmi/raw_ip: N") == true } == true,
                "\(format)")
            let formatRemedy = format["remedy"]?.string ?? ""
            #expect(formatRemedy.contains("--wda-get-data-format") && formatRemedy.contains("raw_ip Y"), "\(format)")
        }
    }

    /// The `--json` shape (docs/json.md): `status`, `counts`, `checks` and `warnings` in order; counts
    /// that add up to the checks; each check's fields in order, with a remedy whenever it warns or
    /// fails; the exit status 1 exactly when the report fails.
    private static func expectShape(
        _ json: JSONValue, status: Int32, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .object(let top) = json, let checks = json["checks"]?.array else {
            Issue.record("not a doctor report: \(json)", sourceLocation: sourceLocation)
            return
        }
        #expect(top.map(\.0) == ["status", "counts", "checks", "warnings"], sourceLocation: sourceLocation)
        let statuses = checks.compactMap { $0["status"]?.string }
        #expect(statuses.count == checks.count, "\(json)", sourceLocation: sourceLocation)
        for name in ["pass", "skip", "warn", "fail"] {
            #expect(
                json["counts"]?[name]?.int == statuses.count { $0 == name }, "\(name): \(json)",
                sourceLocation: sourceLocation)
        }
        let worst = ["fail", "warn", "pass"].first { statuses.contains($0) } ?? "pass"
        #expect(json["status"]?.string == worst, sourceLocation: sourceLocation)
        #expect(status == (worst == "fail" ? 1 : 0), "exit \(status) for \(worst)", sourceLocation: sourceLocation)
        for check in checks {
            guard case .object(let fields) = check else { continue }
            #expect(
                fields.map(\.0) == ["check", "modem", "status", "summary", "evidence", "remedy", "fixed"], "\(check)",
                sourceLocation: sourceLocation)
            #expect(check["check"]?.string?.isEmpty == false && check["summary"]?.string?.isEmpty == false)
            #expect(check["modem"] == .null || check["modem"]?.int != nil, "\(check)", sourceLocation: sourceLocation)
            #expect(
                check["evidence"]?.array?.allSatisfy { $0.string != nil } == true, "\(check)",
                sourceLocation: sourceLocation)
            if ["warn", "fail"].contains(check["status"]?.string) {
                #expect(
                    check["remedy"]?.string?.isEmpty == false, "no remedy: \(check)", sourceLocation: sourceLocation)
            }
        }
    }

    /// What `doctor --fix` could change on the device besides rp_filter: the interfaces' sysctls,
    /// addresses, rules, routes and cellpath's records (IPv6 lifetimes left out: they count down).
    private static func machineState(_ device: SimulatedDevice) throws -> [String] {
        let state = try #require(try device.environment()["CELLPATH_STATE_DIR"])
        var lines: [String] = []
        for command in [
            ["sysctl", "net.ipv4.conf", "net.ipv6.conf"], ["ip", "-o", "address"], ["ip", "-4", "rule"],
            ["ip", "-6", "rule"], ["ip", "-4", "route", "show", "table", "all"],
            ["ip", "-6", "route", "show", "table", "all"], ["sh", "-c", "cat \(state)/* 2>/dev/null"]
        ] {
            let output = try device.run(command).stdout
            lines += output.split(separator: "\n").map { line in
                line.split(separator: " ").filter { !$0.hasSuffix("sec") }.joined(separator: " ")
            }
        }
        return lines
    }

    /// ModemManager manages the modem: doctor reads it through ModemManager, names it as the
    /// port's owner, and finds nothing wrong with that.
    @Test func withModemManagerOwningTheModem() throws {
        var scenario = Scenario.builtIn
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            #expect(
                Poll.until(timeout: .seconds(60), interval: .milliseconds(500)) {
                    (try? device.run(["mmcli", "-L"]).stdout.contains("/Modem/")) == true
                }, "ModemManager never listed the modem")
            let report = try Self.doctor(device)
            let owners = try #require(report.checks["owners"], "\(report.json)")
            #expect(owners["status"]?.string == "pass", "\(owners)")
            #expect(owners["summary"]?.string == "ModemManager manages it", "\(owners)")
            let evidence = owners["evidence"]?.array?.compactMap(\.string) ?? []
            #expect(evidence.contains("ModemManager: running on the system bus"), "\(evidence)")
            #expect(evidence.contains("read through: modemmanager"), "\(evidence)")
            #expect(report.checks["read"]?["status"]?.string == "pass", "\(report.checks["read"] ?? .null)")
            #expect(
                report.checks["read"]?["evidence"]?.array?.contains(.string("backend: modemmanager")) == true,
                "\(report.checks["read"] ?? .null)")
            // The built-in modem is a model of ModemManager's FCC-unlock list (1199:9079) that
            // ModemManager has not enabled: its radio reads off, which is no sign of a lock.
            let radio = try #require(report.checks["radio"], "\(report.json)")
            #expect(radio["status"]?.string == "warn", "\(radio)")
            #expect(radio["summary"]?.string == "ModemManager has not enabled the modem (its radio is off)", "\(radio)")
            let listed = try JSONValue.parse(device.cellpath(["modems", "--json"]).stdout)["modems"]?.array ?? []
            #expect(listed.first?["radio"]?.string == "off", "\(listed)")
        }
    }

    private static func rpFilter(_ device: SimulatedDevice) throws -> String {
        try device.run(["cat", "/proc/sys/net/ipv4/conf/wwan0/rp_filter"]).stdout.filter { !$0.isWhitespace }
    }
}
