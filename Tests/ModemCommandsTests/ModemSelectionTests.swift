import CellpathCore
import ModemDiscovery
import Synchronization
import Testing

@testable import CommandLineKit
@testable import ModemCommands

/// How a modem is named on the command line, and how one is chosen among those found.
@Suite struct ModemSelectionTests {
    private static let command = ["cellpath", "modems", "show"]

    private static func selector(_ text: String) throws(UsageError) -> ModemSelector {
        try ModemSelector(text, command: command)
    }

    @Test func namesAreReadByTheirShape() throws {
        #expect(try Self.selector("0") == .index(0))
        #expect(try Self.selector("12") == .index(12))
        #expect(try Self.selector("351234567890123") == .imei("351234567890123"))
        #expect(try Self.selector("8944110012345678901") == .iccid("8944110012345678901"))
        #expect(try Self.selector("8944110012345678901f") == .iccid("8944110012345678901F"))
        #expect(try Self.selector("cdc-wdm0") == .port("cdc-wdm0"))
        #expect(try Self.selector("/dev/wwan0mbim0") == .port("wwan0mbim0"))
        for invalid in ["1234", "12345678901234567", "", "/dev/", "1f"] {
            #expect(throws: UsageError.self, "\(invalid)") { try Self.selector(invalid) }
        }
    }

    private static let modems = [
        DiscoveredModem(
            index: 0, devicePath: "/sys/devices/usb1/1-1/1-1:1.0",
            ports: [
                ControlPort(name: "cdc-wdm0", devicePath: "/dev/cdc-wdm0", protocol: .mbim),
                ControlPort(name: "wwan0mbim0", devicePath: "/dev/wwan0mbim0", protocol: .mbim)
            ],
            interfaces: ["wwan0"]),
        DiscoveredModem(
            index: 1, devicePath: "/sys/devices/usb1/1-2/1-2:1.0",
            ports: [ControlPort(name: "cdc-wdm1", devicePath: "/dev/cdc-wdm1", protocol: .qmi)], interfaces: ["wwan1"])
    ]

    private static func report(_ modem: DiscoveredModem) -> ModemReport {
        ModemReport(
            modem: modem,
            result: .success(
                ModemStatus(
                    imei: "35000000000000\(modem.index)",
                    sim: SIMStatus(state: .ready, iccid: "894400000000000000\(modem.index)"))))
    }

    /// Chooses with `selector` among `modems`, counting the modems read.
    private static func choose(
        _ selector: ModemSelector?, among modems: [DiscoveredModem] = modems
    ) async throws
        -> (ModemSelection.Choice, Int)
    {
        let reads = Mutex(0)
        let choice = try await ModemSelection.choose(
            selector, among: modems, roots: DeviceRoots(), disclosure: .redacted
        ) { modems in
            reads.withLock { $0 += modems.count }
            return modems.map(report)
        }
        return (choice, reads.withLock { $0 })
    }

    @Test func anIndexOrAPortChoosesWithoutReadingTheModems() async throws {
        for selector in [ModemSelector.index(1), .port("cdc-wdm1")] {
            let (choice, reads) = try await Self.choose(selector)
            guard case .chosen(let modem, let report) = choice else { Issue.record("\(choice)"); continue }
            #expect(modem.index == 1 && report == nil && reads == 0)
        }
        let (choice, _) = try await Self.choose(.port("wwan0mbim0"))
        guard case .chosen(let modem, _) = choice else { Issue.record("\(choice)"); return }
        #expect(modem.index == 0)
    }

    @Test func anIMEIOrICCIDIsMatchedAgainstWhatTheModemsReport() async throws {
        for selector in [ModemSelector.imei("350000000000001"), .iccid("8944000000000000001F")] {
            let (choice, reads) = try await Self.choose(selector)
            guard case .chosen(let modem, let report) = choice else { Issue.record("\(choice)"); continue }
            #expect(modem.index == 1 && report?.status?.imei == "350000000000001" && reads == 2)
        }
    }

    @Test func theOnlyModemIsChosenWithoutAName() async throws {
        let (choice, reads) = try await Self.choose(nil, among: [Self.modems[1]])
        guard case .chosen(let modem, nil) = choice else { Issue.record("\(choice)"); return }
        #expect(modem.index == 1 && reads == 0)
    }

    @Test func severalModemsWithoutANameOrNoMatchAreRefusedWithTheList() async throws {
        for (selector, message) in [
            (nil, "2 modems found: name one (index, IMEI, ICCID or control port)"),
            (ModemSelector.index(5), "no modem matches '5'"),
            (ModemSelector.imei("359999999999999"), "no modem matches '359999999999999'")
        ] {
            let (choice, _) = try await Self.choose(selector)
            guard case .refused(let outcome) = choice else { Issue.record("\(choice)"); continue }
            #expect(outcome.exitStatus == 64)
            #expect(outcome.failure?.error.message == message)
            guard case .list(let rows) = outcome.output?.record["modems"] else { Issue.record("no list"); continue }
            #expect(rows.count == 2)
        }
    }

    private static let l850 = UncontrolledModem(
        index: 2, kind: .unsupported,
        devicePath: "/sys/devices/pci0000:00/0000:01:00.0", bus: .pci,
        vendorID: "8086", productID: "7360", manufacturer: "Intel",
        model: "XMM7360", ports: ["wwan0at0", "wwan0xmmrpc0"],
        portTypes: ["AT", "XMMRPC"])
    private static let hilink = UncontrolledModem(
        index: 3, kind: .router, devicePath: "/sys/devices/usb1/1-3",
        bus: .usb, vendorID: "12d1", productID: "14dc",
        manufacturer: "Huawei", model: "E3372h", interfaces: ["usb0"],
        driver: "cdc_ether")

    /// Chooses with `selector` among the two modems and the two cellpath cannot drive.
    private static func chooseAmongAll(
        _ selector: ModemSelector?, modems: [DiscoveredModem] = modems
    ) async throws
        -> ModemSelection.Choice
    {
        try await ModemSelection.choose(
            selector, among: modems, roots: DeviceRoots(), uncontrolled: [l850, hilink],
            disclosure: .redacted
        ) { $0.map(report) }
    }

    /// Named by index, WWAN port or interface, or alone: exit 69 with the reason; a driven modem
    /// is still chosen beside them.
    @Test func aModemCellpathCannotDriveIsRefusedWithItsReason() async throws {
        let reason =
            "modem 2: Intel XMM7360 (8086:7360) exposes only XMM RPC and AT ports: "
            + "cellpath needs an MBIM or QMI port; see docs/operations.md"
        let refusal = CellpathError(.unavailable, reason, hint: "cellpath modems lists the modems cellpath can use")
        for selector in [ModemSelector.index(2), .port("wwan0xmmrpc0")] {
            await #expect(throws: refusal) {
                _ = try await Self.chooseAmongAll(selector)
            }
        }
        for selector in [ModemSelector.index(3), .port("usb0")] {
            do {
                _ = try await Self.chooseAmongAll(selector)
                Issue.record("\(selector) chosen")
            } catch let error as CellpathError {
                #expect(error.kind == .unavailable && error.message.contains("router mode"), "\(error.message)")
                #expect(error.message.contains("--interface usb0"), "\(error.message)")
            }
        }
        await #expect(throws: refusal) {
            _ = try await Self.chooseAmongAll(nil, modems: [])
        }
        guard case .chosen(let modem, _) = try await Self.chooseAmongAll(nil, modems: [Self.modems[1]]) else {
            Issue.record("the only driven modem is not chosen")
            return
        }
        #expect(modem.index == 1)
    }

    /// In the list: the fields of a driven modem, `supported`/`mode` and the reason or note, in index order.
    @Test func theListShowsModemsCellpathCannotDriveInOrder() {
        let output = ModemListing.list(
            Self.modems.map(Self.report), .redacted, roots: DeviceRoots(),
            uncontrolled: [Self.hilink, Self.l850])
        guard case .list(let rows) = output.record["modems"] else { Issue.record("no list"); return }
        let records = rows.compactMap { row -> Record? in if case .record(let r) = row { r } else { nil } }
        #expect(records.map { $0["index"] } == [.int(0), .int(1), .int(2), .int(3)])
        #expect(records[0].fields.map(\.key) == records[2].fields.map(\.key))
        #expect(records[0]["supported"] == .bool(true) && records[0]["mode"] == .string("modem"))
        #expect(records[2]["supported"] == .bool(false) && records[2]["mode"] == .string("modem"))
        #expect(records[2]["reason"] == .string(Self.l850.reason) && records[2]["note"] == .null)
        guard case .record(let pci) = records[2]["pci"] else { Issue.record("no pci"); return }
        #expect(pci["vendor_id"] == .string("8086") && pci["device_id"] == .string("7360"))
        #expect(records[2]["usb"] == .null)
        #expect(records[3]["mode"] == .string("router") && records[3]["interface"] == .string("usb0"))
        #expect(records[3]["driver"] == .string("cdc_ether") && records[3]["port"] == .null)
        #expect(records[3]["note"] == .string(Self.hilink.reason) && records[3]["reason"] == .null)
        #expect(output.notes == ["modem 2: \(Self.l850.reason)", "modem 3: \(Self.hilink.reason)"])
        #expect(output.humanLines?.count == 5)
    }

    @Test func noModemAtAllIsUnavailable() async {
        await #expect(throws: CellpathError.self) { _ = try await Self.choose(nil, among: []) }
    }

    @Test func theRecordMasksPersonalDataAndCarriesTheError() {
        let error = ModemError(
            .transport, .temporary, operation: "open cdc-wdm1", reason: "no answer within 1 s", hint: "retry")
        let failed = ModemListing.record(ModemReport(modem: Self.modems[1], result: .failure(error)), .redacted)
        guard case .record(let fields) = failed["error"] else { Issue.record("no error"); return }
        #expect(fields["exit_code"] == .int(75))
        #expect(fields["layer"] == .string("transport"))
        #expect(fields["message"] == .string("couldn't open cdc-wdm1: no answer within 1 s"))
        #expect(failed["sim"] == .null && failed["imei"] == .null)

        let read = ModemListing.record(Self.report(Self.modems[0]), .redacted)
        #expect(read["imei"] == .string("••••00"))
        #expect(ModemListing.record(Self.report(Self.modems[0]), .full)["imei"] == .string("350000000000000"))
        #expect(read["error"] == .null)
    }
}
