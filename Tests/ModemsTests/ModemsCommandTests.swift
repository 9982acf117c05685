import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `cellpath modems` and `cellpath modems show`, the built binary against simulated modems in
/// this process (`CELLPATH_SYSFS_ROOT` and `CELLPATH_DEV_ROOT` point it at them). No root,
/// except for the proxy and permission tests.
@Suite(.serialized, .timeLimit(.minutes(3)), .ownThreads)
struct ModemsCommandTests {
    /// An MBIM modem (also seen as wwan0mbim0) and a QMI modem.
    static func twoModems() throws -> SimulatedFleet { try SimulatedFleet([.test(.mbim, 1), .test(.qmi, 2)]) }

    /// `cellpath ARGS… --no-proxy` against `fleet`.
    static func run(_ fleet: SimulatedFleet, _ arguments: [String], proxy: Bool = false) throws -> ProcessResult {
        try CellpathBinary.run(arguments + (proxy ? [] : ["--no-proxy"]), environment: fleet.environment)
    }

    static func json(_ result: ProcessResult) throws -> JSONValue { try JSONValue.parse(result.stdout) }

    @Test func listsEachModemOnceWithWhatItReportsAndPersonalDataMasked() throws {
        let fleet = try Self.twoModems()
        let result = try Self.run(fleet, ["modems", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "")
        let json = try Self.json(result)
        let modems = try #require(json["modems"]?.array)
        try #require(modems.count == 2)
        let mbim = modems[0], qmi = modems[1]
        #expect(mbim["index"]?.int == 0 && mbim["protocol"]?.string == "mbim" && mbim["port"]?.string == "cdc-wdm0")
        // One modem, two ports: the USB control port and the WWAN subsystem's.
        #expect(mbim["ports"]?.array?.compactMap(\.string) == ["cdc-wdm0", "wwan0mbim0"])
        #expect(mbim["device"]?.string == "\(fleet.runDirectory)/dev/cdc-wdm0")
        #expect(
            qmi["index"]?.int == 1 && qmi["protocol"]?.string == "qmi"
                && qmi["ports"]?.array?.compactMap(\.string) == ["cdc-wdm1"])
        // No ModemManager on a bus here: `--backend auto` reads each modem over its own protocol.
        #expect(mbim["backend"]?.string == "mbim" && qmi["backend"]?.string == "qmi")
        for (modem, n) in [(mbim, 1), (qmi, 2)] {
            #expect(modem["interface"]?.string == "wwan\(n - 1)")
            #expect(modem["manufacturer"]?.string == "Maker \(n)" && modem["model"]?.string == "Model \(n)")
            #expect(modem["firmware"]?.string == "FW.\(n)")
            #expect(modem["imei"]?.string == "••••0\(n)")
            #expect(modem["radio"]?.string == "on")
            #expect(modem["sim"]?["state"]?.string == "ready")
            #expect(modem["sim"]?["iccid"]?.string == "••••0\(n)")
            #expect(modem["sim"]?["imsi"]?.string == "••••0\(n)")
            #expect(modem["sim"]?["msisdns"]?.array?.compactMap(\.string) == ["+••••0\(n)"])
            #expect(
                modem["home_operator"]?["id"]?.string == "234-15"
                    && modem["home_operator"]?["name"]?.string == "Test Net")
            #expect(modem["registration"]?["state"]?.string == "home")
            #expect(modem["registration"]?["operator"]?["id"]?.string == "234-15")
            #expect(modem["registration"]?["access_technology"]?.string == "lte")
            #expect(modem["signal"]?["rssi_dbm"]?.int == -67)
            #expect(modem["packet_service"]?.string == "attached")
            #expect(modem["bearer"]?["state"]?.string == "disconnected")
            #expect(modem["error"] == .null)
        }
        #expect(json["warnings"]?.array == [])
        #expect(!result.stdout.contains("350000000000001") && !result.stdout.contains("234150000000002"))
    }

    @Test func verboseFullShowsThePersonalData() throws {
        let fleet = try Self.twoModems()
        let result = try Self.run(fleet, ["modems", "--json", "--verbose-full"])
        #expect(result.status == 0, "\(result.stderr)")
        let modem = try #require(try Self.json(result)["modems"]?.array?.last)
        #expect(modem["imei"]?.string == "350000000000002")
        #expect(modem["sim"]?["iccid"]?.string == "8944000000000000002")
        #expect(modem["sim"]?["imsi"]?.string == "234150000000002")
        #expect(modem["sim"]?["msisdns"]?.array?.compactMap(\.string) == ["+447700900002"])
        // The libraries' message traces, in full.
        #expect(result.stderr.contains("debug: [libqmi] ["))
        #expect(result.stderr.contains("234150000000002") && result.stderr.contains("translated = +447700900002"))
    }

    /// `-v` traces every message of both libraries, without the personal data.
    @Test func verboseTracesTheMessagesWithoutPersonalData() throws {
        let fleet = try Self.twoModems()
        let result = try Self.run(fleet, ["modems", "-v"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("debug: [libmbim] [\(fleet.runDirectory)/dev/cdc-wdm0] sent message"))
        #expect(result.stderr.contains("debug: [libqmi] [\(fleet.runDirectory)/dev/cdc-wdm1] sent message"))
        #expect(result.stderr.contains("debug: [libqmi] <<<<<<   message     = \"Get MSISDN\" (0x0024)"))
        for n in 1 ... 2 {
            for secret in ["35000000000000\(n)", "894400000000000000\(n)", "23415000000000\(n)", "44770090000\(n)"] {
                #expect(!result.stderr.contains(secret), "\(secret) in the trace")
                // As the bytes of a TLV libqmi has no name for (Get MSISDN's IMSI).
                let bytes = secret.utf8.map { String($0, radix: 16, uppercase: true) }.joined(separator: ":")
                #expect(!result.stderr.contains(bytes), "\(secret) in the trace as \(bytes)")
            }
        }
    }

    @Test func theTableShowsOneModemPerRow() throws {
        let fleet = try Self.twoModems()
        let result = try Self.run(fleet, ["modems"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                MODEM  PROTOCOL  PORT      BACKEND  INTERFACE  MODEL    SIM    OPERATOR  REGISTRATION  TECHNOLOGY  SIGNAL   BEARER        ADDRESS
                0      MBIM      cdc-wdm0  mbim     wwan0      Model 1  ready  Test Net  home          lte         -67 dBm  disconnected  -
                1      QMI       cdc-wdm1  qmi      wwan1      Model 2  ready  Test Net  home          lte         -67 dBm  disconnected  -

                """)
    }

    /// `--backend mbim|qmi` opens only ports of that protocol and refuses the others (64);
    /// `--backend modemmanager` without a bus to reach ModemManager on is 69, with the way out.
    @Test func theBackendOptionChoosesWhoReadsTheModem() throws {
        let fleet = try Self.twoModems()
        let listed = try Self.run(fleet, ["modems", "--backend", "mbim", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let modems = try #require(try Self.json(listed)["modems"]?.array)
        #expect(modems.count == 2)
        #expect(modems[0]["backend"]?.string == "mbim" && modems[0]["error"] == .null)
        #expect(modems[1]["backend"] == .null)
        #expect(modems[1]["error"]?["message"]?.string == "couldn't open cdc-wdm1 over MBIM: it speaks QMI")
        #expect(modems[1]["error"]?["exit_code"]?.int == 64)

        let qmi = try Self.run(fleet, ["modems", "show", "1", "--backend", "qmi", "--json"])
        #expect(qmi.status == 0, "\(qmi.stderr)")
        #expect(try Self.json(qmi)["backend"]?.string == "qmi")
        let refused = try Self.run(fleet, ["modems", "show", "0", "--backend", "qmi"])
        #expect(refused.status == 64)
        #expect(
            refused.stderr.hasPrefix(
                "error: couldn't open cdc-wdm0 over QMI: it speaks MBIM\nhint: use --backend mbim, modemmanager or auto"
            ),
            "\(refused.stderr)")

        var environment = fleet.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(fleet.runDirectory)/no-bus"
        let noBus = try CellpathBinary.run(
            ["modems", "show", "0", "--backend", "modemmanager"], environment: environment)
        #expect(noBus.status == 69)
        #expect(noBus.stderr.hasPrefix("error: couldn't connect to the system bus: "), "\(noBus.stderr)")
        #expect(
            noBus.stderr.contains(
                "\nhint: ModemManager is reached on the system bus (DBUS_SYSTEM_BUS_ADDRESS names another): "
                    + "start the bus and ModemManager, or use --backend mbim|qmi\n"), "\(noBus.stderr)")
        // auto: no ModemManager, so the modem is read over its own protocol.
        let auto = try CellpathBinary.run(["modems", "show", "0", "--no-proxy", "--json"], environment: environment)
        #expect(auto.status == 0, "\(auto.stderr)")
        #expect(try Self.json(auto)["backend"]?.string == "mbim")
    }

    @Test func showNamesTheModemByIndexIMEIICCIDOrPort() throws {
        let fleet = try Self.twoModems()
        let names = [
            "1", "350000000000002", "8944000000000000002", "8944000000000000002F", "cdc-wdm1",
            "\(fleet.runDirectory)/dev/cdc-wdm1",
            "0", "wwan0mbim0"
        ]
        for (name, index) in zip(names, [1, 1, 1, 1, 1, 1, 0, 0]) {
            let result = try Self.run(fleet, ["modems", "show", name, "--json"])
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(try Self.json(result)["index"]?.int == index, "\(name)")
        }
        let human = try Self.run(fleet, ["modems", "show", "1"])
        #expect(human.stdout.hasPrefix("modem 1: Model 2 (QMI, cdc-wdm1)\nindex:          1\n"), "\(human.stdout)")
        #expect(human.stdout.contains("\nIMEI:           ••••02\n"))
    }

    @Test func showWithSeveralModemsAndNoNameListsThemAndExits64() throws {
        let fleet = try Self.twoModems()
        let result = try Self.run(fleet, ["modems", "show"])
        #expect(result.status == 64)
        #expect(result.stdout.hasPrefix("MODEM  PROTOCOL  PORT"))
        #expect(result.stdout.split(separator: "\n").count == 3)
        #expect(
            result.stderr
                == "error: 2 modems found: name one (index, IMEI, ICCID or control port)\nhint: the modems are listed above\n"
        )
        let json = try Self.json(try Self.run(fleet, ["modems", "show", "--json"]))
        #expect(json["error"]?["kind"]?.string == "usage" && json["error"]?["exit_code"]?.int == 64)
        #expect(json["modems"]?.array?.count == 2)
    }

    /// `fetch`, the checks and `coverage` refuse several modems and none named (or a name that
    /// matches none) as `modems show` and `bearer` do: the modems listed, `error:` and exit 64,
    /// before anything is sent (the server given is never reached).
    @Test(arguments: [
        ["fetch", "https://api.truid.test/"],
        ["subscriber-check", "+447940448591", "--server", "http://127.0.0.1:9"],
        ["phone-check", "+447940448591", "-m", "7", "--server", "http://127.0.0.1:9"],
        ["coverage", "--server", "http://127.0.0.1:9"]
    ])
    func commandsWithAPathListTheModemsWhenNoneIsChosen(arguments: [String]) throws {
        let fleet = try Self.twoModems()
        let result = try Self.run(fleet, arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("MODEM  PROTOCOL  PORT"), "\(result.stdout)")
        #expect(result.stdout.split(separator: "\n").count == 3)
        let message =
            arguments.contains("-m")
            ? "no modem matches '7'" : "2 modems found: name one (index, IMEI, ICCID or control port)"
        #expect(result.stderr == "error: \(message)\nhint: the modems are listed above\n")
    }

    @Test func aNameThatMatchesNoModemOrNothingIsAUsageError() throws {
        let fleet = try Self.twoModems()
        let none = try Self.run(fleet, ["modems", "show", "7"])
        #expect(none.status == 64)
        #expect(none.stderr == "error: no modem matches '7'\nhint: the modems are listed above\n")
        let unknownIMEI = try Self.run(fleet, ["modems", "show", "359999999999999"])
        #expect(unknownIMEI.status == 64)
        let invalid = try Self.run(fleet, ["modems", "show", "12345"])
        #expect(invalid.status == 64)
        #expect(invalid.stdout == "")
        #expect(
            invalid.stderr.hasPrefix(
                "Error: invalid modem '12345': expected an index (0, 1…), an IMEI (15 digits), an ICCID (18 to 22 digits) or a control port\n"
            ))
    }

    /// `-m/--modem`, the option every modem command shares, names the modem too; naming two is refused.
    @Test func showTakesTheModemOption() throws {
        let fleet = try Self.twoModems()
        let option = try Self.run(fleet, ["modems", "show", "-m", "cdc-wdm1", "--json"])
        #expect(option.status == 0, "\(option.stderr)")
        #expect(try Self.json(option)["index"]?.int == 1)
        let both = try Self.run(fleet, ["modems", "show", "0", "--modem", "1"])
        #expect(both.status == 64)
        #expect(both.stderr.hasPrefix("Error: two modems named: '0' and '-m 1'\n"), "\(both.stderr)")
    }

    @Test func aSingleModemNeedsNoName() throws {
        let fleet = try SimulatedFleet([.test(.qmi, 3)])
        let result = try Self.run(fleet, ["modems", "show", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.json(result)["imei"]?.string == "••••03")
    }

    @Test func noModemIsAnEmptyListButShowFailsWith69() throws {
        let root = try TemporaryDirectory.make("cellpath-nomodem")
        defer { FileSystem.removeTree(root) }
        let environment = ["CELLPATH_SYSFS_ROOT": root, "CELLPATH_DEV_ROOT": root]
        let list = try CellpathBinary.run(["modems"], environment: environment)
        #expect(list.status == 0)
        #expect(
            list.stdout
                == "no modem found (looked for MBIM and QMI ports in \(root)/class/usbmisc and \(root)/class/wwan)\n")
        let json = try CellpathBinary.run(["modems", "--json"], environment: environment)
        #expect(json.stdout == "{\n  \"modems\": [],\n  \"warnings\": []\n}\n")
        let show = try CellpathBinary.run(["modems", "show"], environment: environment)
        #expect(show.status == 69)
        #expect(
            show.stderr.hasPrefix(
                "error: no modem found (looked for MBIM and QMI ports in \(root)/class/usbmisc and \(root)/class/wwan)\nhint: "
            ))
    }

    @Test func statesOfFaultsAreShownAndExit0() throws {
        var radioOff = ModemFaults()
        radioOff.radioOff = true
        var denied = ModemFaults()
        denied.registration = .denied
        let fleet = try SimulatedFleet([
            .test(.mbim, 1, sim: .some(nil)),
            .test(.qmi, 2, sim: SimulatedSIM(iccid: "8944000000000000002", pinLocked: true)),
            .test(.qmi, 3, faults: radioOff),
            .test(.mbim, 4, faults: denied)
        ])
        let result = try Self.run(fleet, ["modems", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let modems = try #require(try Self.json(result)["modems"]?.array)
        #expect(modems.map { $0["sim"]?["state"]?.string } == ["absent", "pin-required", "ready", "ready"])
        #expect(
            modems.map { $0["registration"]?["state"]?.string } == [
                "not-registered", "not-registered", "not-registered", "denied"
            ])
        #expect(modems.map { $0["radio"]?.string } == ["on", "on", "off", "on"])
        #expect(modems[1]["sim"]?["pin_retries"]?.int == 3)
        #expect(modems[3]["registration"]?["network_error"]?.string == "plmn-not-allowed")
        #expect(modems.allSatisfy { $0["error"] == .null })
    }

    /// A modem that answers too late is listed with its error and does not hide the others;
    /// `show` exits with its code.
    @Test func aModemThatAnswersTooLateIsListedWithItsError() throws {
        var slow = ModemFaults()
        slow.responseDelayMs = 3000
        let fleet = try SimulatedFleet([.test(.mbim, 1), .test(.qmi, 2, faults: slow)])
        let list = try Self.run(fleet, ["modems", "--timeout", "1", "--json"])
        #expect(list.status == 0)
        let json = try Self.json(list)
        let modems = try #require(json["modems"]?.array)
        #expect(modems[0]["error"] == .null && modems[0]["imei"]?.string == "••••01")
        let error = try #require(modems[1]["error"])
        #expect(error["kind"]?.string == "temporary")
        #expect(error["layer"]?.string == "transport")
        #expect(error["message"]?.string == "couldn't allocate a DMS client ID on cdc-wdm1: no answer within 1 s")
        #expect(error["exit_code"]?.int == 75)
        #expect(modems[1]["model"]?.string == "Model 2", "discovery's model, from sysfs")
        #expect(
            json["warnings"]?.array?.compactMap(\.string) == [
                "modem 1: couldn't allocate a DMS client ID on cdc-wdm1: no answer within 1 s"
            ])
        #expect(
            list.stderr == "warning: modem 1: couldn't allocate a DMS client ID on cdc-wdm1: no answer within 1 s\n")

        let show = try Self.run(fleet, ["modems", "show", "1", "--timeout", "1"])
        #expect(show.status == 75)
        #expect(
            show.stderr.contains(
                "error: couldn't allocate a DMS client ID on cdc-wdm1: no answer within 1 s\nhint: another program may be reading the port"
            ))
        let showJSON = try Self.json(try Self.run(fleet, ["modems", "show", "1", "--timeout", "1", "--json"]))
        #expect(showJSON["error"]?["exit_code"]?.int == 75 && showJSON["error"]?["layer"]?.string == "transport")
        #expect(showJSON["index"]?.int == 1)
    }

    @Test func runsOfTheCommandLeaveNoQMIClientIDAllocated() throws {
        let fleet = try SimulatedFleet([.test(.qmi, 1)])
        for _ in 0 ..< 10 {
            let result = try Self.run(fleet, ["modems", "show", "0", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func throughTheProxiesByDefaultAndNoClientIDLeft() throws {
        let fleet = try Self.twoModems()
        for _ in 0 ..< 5 {
            let result = try Self.run(fleet, ["modems", "--json", "-v"], proxy: true)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Self.json(result)["modems"]?.array?.map { $0["error"] } == [.null, .null])
            #expect(result.stderr.contains("cdc-wdm0: MBIM session open through mbim-proxy"))
            #expect(result.stderr.contains("cdc-wdm1: QMI session open through qmi-proxy"))
        }
        #expect(fleet.device(1).allocatedQMIClientIDs == 0)
    }

    /// libmbim closes a proxied device's socket twice (the second close can take another thread's
    /// descriptor of the same number): cellpath keeps the proxy connection instead, so no close
    /// of the command's process fails with EBADF. The proxy is started by a first run, so that
    /// strace follows the command alone.
    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func noDescriptorIsClosedTwiceThroughTheProxy() throws {
        let fleet = try SimulatedFleet([.test(.mbim, 1)])
        let first = try Self.run(fleet, ["modems", "show", "0"], proxy: true)
        #expect(first.status == 0, "\(first.stderr)")
        let traced = try ProcessRunner.run(
            FailedCloses.tracer + [CellpathBinary.path, "modems", "show", "0", "-v"],
            environment: fleet.environment)
        #expect(traced.status == 0, "\(traced.stderr)")
        #expect(traced.stderr.contains("cdc-wdm0: MBIM session open through mbim-proxy"))
        #expect(FailedCloses.ofClosedDescriptors(in: traced.stderr).isEmpty, "\(traced.stderr)")
    }

    /// An open through mbim-proxy that fails half-way (the proxy is still opening a modem that
    /// answers too late) leaves a device whose release would close its socket twice: it is kept
    /// instead. The proxy is started by a run on the other modem, so that strace follows the
    /// command alone.
    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func aFailedOpenThroughTheProxyClosesNoDescriptorTwice() throws {
        var slow = ModemFaults()
        slow.responseDelayMs = 3000
        let fleet = try SimulatedFleet([.test(.mbim, 1), .test(.mbim, 2, faults: slow)])
        let first = try Self.run(fleet, ["modems", "show", "0"], proxy: true)
        #expect(first.status == 0, "\(first.stderr)")
        let traced = try ProcessRunner.run(
            FailedCloses.tracer + [CellpathBinary.path, "modems", "show", "1", "--timeout", "1", "-v"],
            environment: fleet.environment)
        #expect(traced.status == 75, "\(traced.stderr)")
        #expect(traced.stderr.contains("no answer within 1 s"), "\(traced.stderr)")
        #expect(FailedCloses.ofClosedDescriptors(in: traced.stderr).isEmpty, "\(traced.stderr)")
    }

    /// Another user may not open the port (a pty owned by root, mode 620): exit 77 with the remedy.
    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func aPortThatMayNotBeOpenedIsAPermissionError() throws {
        let fleet = try SimulatedFleet([.test(.mbim, 1)])
        #expect(chmod(fleet.runDirectory, 0o755) == 0)
        var environment = fleet.environment
        environment["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"
        environment["HOME"] = "/nonexistent"
        environment["CELLPATH_SYSTEM_CONFIG"] = "/nonexistent/cellpath.conf"
        let result = try ProcessRunner.run(
            ["runuser", "-u", "nobody", "--", CellpathBinary.path, "modems", "show", "0"],
            environment: environment)
        #expect(result.status == 77)
        #expect(
            result.stderr == """
                error: couldn't open \(fleet.runDirectory)/dev/cdc-wdm0: permission denied
                hint: run as root (sudo), or give your user read and write access to the port (its group): the cellpath group of the udev rules, SupplementaryGroups=cellpath in a systemd unit (docs/operations.md)

                """)
    }
}
