import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// The `cellpath sim` commands as a user meets them: `sim exec` passes signals on and
/// answers as a shell for commands it cannot run, `sim down` leaves nothing running and says
/// what it removed, `sim status` shows each modem's radio, registration, PIN and roaming,
/// scenario files are checked the same way by `sim up` and the daemon, and bad input, a world
/// that is down and a user who is not root get their documented exit codes.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct SimCommandTests {
    /// The environment `CellpathBinary.run` gives cellpath.
    static let environment = [
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent", "XDG_CONFIG_HOME": "/nonexistent",
        "LANG": "C.UTF-8", "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
    ]

    /// A scratch file name for this test run.
    private func scratch(_ name: String) -> String { "/tmp/cellpath-simcmd-\(getpid())-\(name)" }

    private func lines(_ path: String) -> [String] {
        (FileSystem.readText(path) ?? "").split(separator: "\n").map(String.init)
    }

    /// A shell script for `sim exec` that writes its pid to `ready` once its traps are set, logs
    /// each SIGINT and SIGTERM it gets to `log`, exits 7 on SIGTERM and otherwise runs until told.
    private func trappingScript(ready: String, log: String) -> String {
        "trap 'echo INT >> \(log)' INT; trap 'echo TERM >> \(log); exit 7' TERM; echo $$ > \(ready); while :; do sleep 0.05; done"
    }

    @Test func execPassesSignalsToItsCommandAndWaitsForIt() throws {
        try SimulatedDevice.with(connect: false) { device in
            let ready = scratch("ready"), log = scratch("log")
            defer { unlink(ready); unlink(log) }
            let pid = try Spawn.start(
                [
                    CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--",
                    "sh", "-c", trappingScript(ready: ready, log: log)
                ],
                Spawn.Options(environment: Self.environment))
            try #require(Poll.until(timeout: .seconds(10)) { FileSystem.exists(ready) && !lines(ready).isEmpty })
            kill(pid, SIGINT)
            #expect(Poll.until(timeout: .seconds(10)) { lines(log) == ["INT"] }, "\(lines(log))")
            // cellpath still waits for its command.
            var status: Int32 = 0
            #expect(waitpid(pid, &status, WNOHANG) == 0)
            kill(pid, SIGTERM)
            #expect(Spawn.wait(pid) == 7)
            #expect(lines(log) == ["INT", "TERM"])
            let child = try #require(Int32(lines(ready).first ?? ""))
            #expect(Poll.until(timeout: .seconds(10)) { kill(child, 0) != 0 }, "the command outlived sim exec")
        }
    }

    @Test func ctrlCOnATerminalReachesTheCommandOnce() throws {
        try SimulatedDevice.with(connect: false) { device in
            let ready = scratch("tty-ready"), log = scratch("tty-log")
            defer { unlink(ready); unlink(log) }
            // `script` runs cellpath on a pseudo-terminal whose foreground group gets ^C from the line
            // discipline (through `sh -c`, which `exec` takes out of the way).
            let command =
                "exec "
                + [
                    CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", "sh", "-c",
                    trappingScript(ready: ready, log: log)
                ].map(SimCommandTests.shellQuoted).joined(separator: " ")
            let input = try FileDescriptor.pipe()
            let output = try FileDescriptor.open("/dev/null", O_WRONLY)
            let pid = try Spawn.start(
                ["script", "-qfec", command, "/dev/null"],
                Spawn.Options(stdin: input.read.rawValue, stdout: output.rawValue, environment: Self.environment))
            input.read.close()
            output.close()
            try #require(Poll.until(timeout: .seconds(10)) { !lines(ready).isEmpty })
            try IO.writeAll(input.write.rawValue, [0x03])
            #expect(Poll.until(timeout: .seconds(10)) { lines(log).contains("INT") })
            usleep(300_000)  // a second, relayed SIGINT would land in this time
            let child = try #require(Int32(lines(ready).first ?? ""))
            kill(child, SIGTERM)
            #expect(Spawn.wait(pid) == 7, "sim exec must still run and pass its command's status on")
            #expect(lines(log) == ["INT", "TERM"])
            input.write.close()
        }
    }

    @Test func commandsThatCannotRunGetAShellsStatus() throws {
        try SimulatedDevice.with(connect: false) { device in
            let notFound = try CellpathBinary.run([
                "sim", "exec", "--prefix", device.prefix, "--", "no-such-command-cellpath"
            ])
            #expect(notFound.status == 127)
            #expect(notFound.stderr.contains("no-such-command-cellpath: command not found"), "\(notFound.stderr)")
            let noFile = try CellpathBinary.run(["sim", "exec", "--prefix", device.prefix, "--", "/nonexistent/tool"])
            #expect(noFile.status == 127)
            let plainFile = scratch("not-executable")
            try FileSystem.write("echo never\n", to: plainFile, mode: 0o644)
            defer { unlink(plainFile) }
            let notExecutable = try CellpathBinary.run(["sim", "exec", "--prefix", device.prefix, "--", plainFile])
            #expect(notExecutable.status == 126, "\(notExecutable.stderr)")
            #expect(!notExecutable.stdout.contains("never"))
            let directory = try CellpathBinary.run(["sim", "exec", "--prefix", device.prefix, "--", "/usr"])
            #expect(directory.status == 126)
            // The command's own status passes through, 127 included.
            let own = try CellpathBinary.run(["sim", "exec", "--prefix", device.prefix, "--", "sh", "-c", "exit 127"])
            #expect(own.status == 127 && own.stderr.isEmpty, "\(own.stderr)")
        }
    }

    @Test func statusShowsRadioRegistrationPINAndRoaming() throws {
        let scenario = try Scenario.decode(
            Array(
                """
                {"modems": [{"sim": {"pinLocked": true}}, {"network": {"roaming": true}}, {"faults": {"radioOff": true}},
                            {"protocol": "qmi", "sim": null}, {"faults": {"registration": "denied"}}]}
                """.utf8))
        try SimulatedDevice.with(scenario, connect: false) { device in
            let modems = try #require(try device.status()["modems"]?.array)
            func show(_ m: JSONValue) -> [String?] {
                [
                    m["radio"]?.string, m["registration"]?.string, m["pin"]?.string,
                    m["pin_attempts_left"]?.int.map(String.init),
                    m["roaming"]?.bool.map { "\($0)" }
                ]
            }
            #expect(
                modems.map(show) == [
                    ["on", "deregistered", "required", "3", "false"],
                    ["on", "roaming", "disabled", "3", "true"],
                    ["off", "deregistered", "disabled", "3", "false"],
                    ["on", "deregistered", nil, nil, "false"],
                    ["on", "denied", "disabled", "3", "false"]
                ])
            // Entering the PIN on the device changes what status shows.
            let port = try #require(modems[0]["control_port"]?.string)
            let pin = try device.run(["mbimcli", "-d", port, "--enter-pin=1234"])
            #expect(pin.status == 0, "\(pin.stderr)")
            let after = try #require(try device.status()["modems"]?.array?.first)
            #expect(show(after) == ["on", "home", "verified", "3", "false"])
            let human = try CellpathBinary.run(["sim", "status", "--prefix", device.prefix])
            #expect(
                human.stdout.contains("registration:") && human.stdout.contains("roaming")
                    && human.stdout.contains("pin:"))
        }
    }

    @Test func scenarioFilesAreCheckedOnceAndNamedAsGiven() throws {
        let prefix = WorldFixture.uniquePrefix()
        let file = scratch("scenario.json")
        defer {
            _ = try? CellpathBinary.run(["sim", "down", "--prefix", prefix])
            unlink(file)
        }
        // Valid: it starts, with no SIM in modem 0 (the daemon's copy keeps the null).
        try FileSystem.write(#"{"modems": [{"sim": null}, {"sim": {"msisdn": "+447940448591"}}]}"#, to: file)
        let up = try CellpathBinary.run(["sim", "up", "--prefix", prefix, "--scenario", file])
        #expect(up.status == 0, "\(up.stderr)")
        let modems = try JSONValue.parse(
            CellpathBinary.run(["sim", "status", "--prefix", prefix, "--json", "--verbose-full"]).stdout)["modems"]?
            .array
        #expect(modems?.first?["sim"] == JSONValue.null || modems?.first?["sim"] == nil)
        #expect(modems?.last?["sim"]?["msisdn"]?.string == "+447940448591")
        #expect(try CellpathBinary.run(["sim", "down", "--prefix", prefix]).status == 0)

        // Invalid: the user's file is named, with line and column, and nothing is built.
        try FileSystem.write("{\n  \"modems\": [{\"imei\": 351234567890124}]\n}\n", to: file)
        let bad = try CellpathBinary.run(["sim", "up", "--prefix", prefix, "--scenario", file])
        #expect(bad.status == 65)
        #expect(
            bad.stderr.contains("\(file):2:23: modems[0].imei: must be a string, got 351234567890124"), "\(bad.stderr)")
        try FileSystem.write("{\"cellularPath\": {\"delayMs\": 40,}}", to: file)
        let syntax = try CellpathBinary.run(["sim", "up", "--prefix", prefix, "--scenario", file])
        #expect(syntax.status == 65)
        #expect(syntax.stderr.contains("\(file):1:33: not valid JSON: trailing comma"), "\(syntax.stderr)")
        #expect(!syntax.stderr.contains("/run/cellpath-sim"))
        #expect(!(try WorldFixture.output(["ip", "netns", "list"]).stdout.contains(prefix)))
    }

    @Test func downReportsWhatItStoppedAndRemoved() throws {
        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? CellpathBinary.run(["sim", "down", "--prefix", prefix]) }
        #expect(try CellpathBinary.run(["sim", "up", "--prefix", prefix]).status == 0)
        // A command that leaves a child behind on the device.
        let exec = try CellpathBinary.run([
            "sim", "exec", "--prefix", prefix, "--", "sh", "-c", "sleep 303 > /dev/null 2>&1 &"
        ])
        #expect(exec.status == 0)
        let down = try CellpathBinary.run(["sim", "down", "--prefix", prefix, "--json"])
        #expect(down.status == 0, "\(down.stderr)")
        let report = try JSONValue.parse(down.stdout)
        #expect(report["stopped_daemon"]?.bool == true)
        #expect(report["daemon_pid"]?.int != nil)
        #expect(
            report["removed_namespaces"]?.array?.compactMap(\.string) == [
                prefix + "ue", prefix + "carrier", prefix + "inet"
            ])
        #expect(report["removed_run_directory"]?.bool == true)
        let stopped = report["stopped_processes"]?.array ?? []
        let sleeper = try #require(stopped.first { $0["name"]?.string == "sleep" }, "\(down.stdout)")
        #expect(sleeper["reason"]?.string == "in \(prefix)ue")
        let pid = try #require(sleeper["pid"]?.int)
        #expect(Poll.until(timeout: .seconds(10)) { kill(Int32(pid), 0) != 0 })
        #expect(!(try WorldFixture.output(["ip", "netns", "list"]).stdout.contains(prefix)))
        let again = try CellpathBinary.run(["sim", "down", "--prefix", prefix])
        #expect(again.stdout.contains("was already down"))
    }

    @Test func aWorldThatIsDownAndAUserWhoIsNotRootGetTheirExitCodes() throws {
        let prefix = WorldFixture.uniquePrefix()
        for arguments in [["env"], ["log"], ["exec"], ["bearer", "connect"], ["bearer", "disconnect"]] {
            let result = try CellpathBinary.run(
                ["sim"] + arguments + ["--prefix", prefix] + (arguments == ["exec"] ? ["--", "true"] : []))
            #expect(result.status == 69, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("the simulated world \(prefix) is not up"), "\(arguments): \(result.stderr)")
        }
        try SimulatedDevice.with(connect: false) { device in
            for arguments in [
                ["up"], ["down"], ["status"], ["bearer", "connect"], ["bearer", "disconnect"], ["exec"], ["env"],
                ["log"]
            ] {
                let result = try ProcessRunner.run(
                    ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", CellpathBinary.path, "sim"]
                        + arguments + ["--prefix", device.prefix] + (arguments == ["exec"] ? ["--", "true"] : []),
                    environment: Self.environment)
                #expect(result.status == 77, "\(arguments): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("sudo"), "\(arguments): \(result.stderr)")
            }
            // The world is untouched by them.
            #expect(try device.status()["state"]?.string == "up")
        }
    }

    /// `sim profiles` lists every device profile a scenario can name, with its ports and net
    /// device, and needs neither root nor a world.
    @Test func profilesListEveryDeviceAndNeedNoRoot() throws {
        let result = try ProcessRunner.run(
            [
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                CellpathBinary.path, "sim", "profiles", "--json"
            ],
            environment: Self.environment)
        #expect(result.status == 0, "\(result.status) \(result.stderr)")
        let profiles = try JSONValue.parse(result.stdout)["profiles"]?.array ?? []
        #expect(profiles.compactMap { $0["profile"]?.string } == DeviceProfile.Name.allCases.map(\.rawValue))
        let mhi = profiles.first { $0["profile"]?.string == DeviceProfile.Name.pcieMHIMBIM.rawValue }
        #expect(mhi?["bus"]?.string == "pcie")
        #expect(mhi?["ports"]?.array?.compactMap(\.string).contains("wwan0mbim0 (MBIM)") == true)
        let router = profiles.first { $0["profile"]?.string == DeviceProfile.Name.routerMode.rawValue }
        #expect(router?["protocol"]?.string == "none")
        #expect(router?["net_device"]?.string == "usb0")
    }

    /// The lifecycle commands as a user types them: a reset under new names, a SIM swap, DNS
    /// reported as 0.0.0.0, suspend and resume, and their bad input.
    @Test func modemLifecycleCommandsChangeTheWorld() throws {
        try SimulatedDevice.with(connect: false) { device in
            func sim(_ arguments: String...) throws -> ProcessResult {
                try CellpathBinary.run(["sim"] + arguments + ["--prefix", device.prefix])
            }
            func modem0() throws -> JSONValue? {
                let status = try JSONValue.parse(try sim("status", "--json", "--verbose-full").stdout)
                return status["modems"]?.array?.first
            }
            let reset = try sim("modem", "reset", "--renumber", "--json")
            #expect(reset.status == 0, "\(reset.stderr)")
            #expect(try modem0()?["control_port"]?.string?.hasSuffix("/dev/cdc-wdm1") == true)
            #expect(try modem0()?["interface"]?.string == "wwan1")
            let swap = try sim(
                "modem", "swap-sim", "--iccid", "8900101234567890999", "--imsi", "001010123456999",
                "--msisdn", "+447700900999")
            #expect(swap.status == 0, "\(swap.stderr)")
            #expect(try modem0()?["sim"]?["iccid"]?.string == "8900101234567890999")
            #expect(try sim("modem", "swap-sim").status == 0)
            let fresh = try modem0()?["sim"]?["iccid"]?.string
            #expect(fresh != nil && fresh != "8900101234567890999")
            let badNumber = try sim("modem", "swap-sim", "--msisdn", "07700900999")
            #expect(badNumber.status == 64, "\(badNumber.status) \(badNumber.stderr)")
            #expect(
                badNumber.stderr.contains("07700900999") || badNumber.stderr.contains("E.164"), "\(badNumber.stderr)")
            #expect(try sim("modem", "report-dns", "0.0.0.0", "::").status == 0)
            let notAnAddress = try sim("modem", "report-dns", "dns.example")
            #expect(notAnAddress.status == 64, "\(notAnAddress.status) \(notAnAddress.stderr)")
            #expect(notAnAddress.stderr.contains("dns.example"))
            #expect(try sim("suspend").status == 0)
            #expect(try sim("suspend").status != 0)
            #expect(try sim("resume").status == 0)
            let twice = try sim("resume")
            #expect(twice.status == 64 && twice.stderr.contains("not suspended"), "\(twice.status) \(twice.stderr)")
        }
    }

    @Test func modemIndexIsBoundedByTheWorld() throws {
        try SimulatedDevice.with(connect: false) { device in
            let beyond = try CellpathBinary.run(["sim", "bearer", "connect", "--modem", "1", "--prefix", device.prefix])
            #expect(beyond.status == 64)
            #expect(beyond.stderr.contains("no modem 1: this world has only modem 0"), "\(beyond.stderr)")
            let limit = try CellpathBinary.run(["sim", "bearer", "connect", "--modem", "32", "--prefix", device.prefix])
            #expect(limit.status == 64)
            #expect(limit.stderr.contains("from 0 to 31"), "\(limit.stderr)")
        }
    }

    /// Each world keeps its bearer records under its own run directory (`CELLPATH_STATE_DIR` of
    /// `sim env`), not in the host's `/run/cellpath`: `bearer down` in another world at the same
    /// time does not touch them, and they go with `sim down`, even for a bearer left up.
    @Test func eachWorldKeepsItsOwnBearerRecords() throws {
        var stateDirectory = ""
        try SimulatedDevice.with(connect: false) { first in
            stateDirectory = try #require(try first.environment()["CELLPATH_STATE_DIR"])
            #expect(stateDirectory == "/run/cellpath-sim/\(first.prefix)/state")
            #expect(try first.cellpath(["bearer", "up", "-m", "0", "-q"]).status == 0)
            let records = FileSystem.entries(stateDirectory) ?? []
            #expect(
                records == ["bearer-run-cellpath-sim-\(first.prefix)-sys-devices-cellpath-sim-usb1-1-1.json"],
                "\(records)")
            try SimulatedDevice.with(connect: false) { second in
                let down = try second.cellpath(["bearer", "down", "-m", "0", "--json"])
                #expect(down.status == 0, "\(down.stderr)")
                #expect(try JSONValue.parse(down.stdout)["bearer"]?.string == "already-down", "\(down.stdout)")
            }
            #expect(try first.status()["modems"]?.array?[0]["bearer"]?.string == "connected")
        }
        #expect(FileSystem.exists(stateDirectory) == false, "the records went with the world")
    }

    /// A world's tru.ID tokens are kept in its run directory (`CELLPATH_TOKEN_CACHE` of `sim env`),
    /// out of the user's own cache, and go with `sim down`.
    @Test func aWorldsTokensStayInItsRunDirectory() throws {
        let home = "/tmp/cellpath-token-home-\(getpid())"
        try FileSystem.makeDirectories(home + "/.cache")
        defer { FileSystem.removeTree(home) }
        var cache = ""
        try SimulatedDevice.with(connect: false) { device in
            cache = try #require(try device.environment()["CELLPATH_TOKEN_CACHE"])
            #expect(cache == "/run/cellpath-sim/\(device.prefix)/tokens.json")
            let check = try CellpathBinary.run(
                [
                    "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path,
                    "sim-check", "+447940448591", "--direct"
                ], environment: ["HOME": home])
            #expect(check.status == 0, "\(check.stderr)")
            var info = stat()
            #expect(stat(cache, &info) == 0 && info.st_mode & 0o777 == 0o600, "the world's token cache is root's alone")
            #expect(
                !FileSystem.exists(home + "/.cache/cellpath/tokens.json"),
                "a simulated world's token went into the user's cache")
        }
        #expect(!cache.isEmpty && !FileSystem.exists(cache), "the tokens went with the world")
    }

    /// A user other than root on the device trusts the world's test CA: its certificate is
    /// readable by all (its keys are not).
    @Test func anotherUserOnTheDeviceReadsTheWorldsCA() throws {
        try SimulatedDevice.with(connect: false) { device in
            let asNobody = try CellpathBinary.run([
                "sim", "exec", "--prefix", device.prefix, "--",
                "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                CellpathBinary.path, "sim-check", "+447940448591", "--direct"
            ])
            #expect(asNobody.status == 0, "\(asNobody.stderr)")
            var info = stat()
            #expect(stat("/run/cellpath-sim/\(device.prefix)/tls/ca.key", &info) == 0 && info.st_mode & 0o777 == 0o600)
        }
    }

    @Test func thePrefixHasOneName() throws {
        try SimulatedDevice.with(connect: false) { device in
            let fromEnvironment = try CellpathBinary.run(
                ["sim", "status", "--json"], environment: ["CELLPATH_SIM_PREFIX": device.prefix])
            #expect(try JSONValue.parse(fromEnvironment.stdout)["state"]?.string == "up", "\(fromEnvironment.stderr)")
        }
        let shown = try CellpathBinary.run(["config", "show", "--prefix", "ab1-", "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("ab1-"))
        let old = try CellpathBinary.run(["config", "show", "--sim-prefix", "ab1-"])
        #expect(old.status == 64)
        // One rule for the prefix, wherever it comes from.
        for (arguments, environment) in [
            (["sim", "status", "--prefix", "_ab"], [:]), (["sim", "status"], ["CELLPATH_SIM_PREFIX": "_ab"]),
            (["config", "show", "--prefix", "_ab"], [:])
        ] {
            let result = try CellpathBinary.run(arguments, environment: environment)
            #expect(result.status != 0, "\(arguments) \(environment)")
            #expect(
                result.stderr.contains("starting with a letter or digit"),
                "\(arguments) \(environment): \(result.stderr)")
        }
    }

    /// `text` single-quoted for `sh`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
