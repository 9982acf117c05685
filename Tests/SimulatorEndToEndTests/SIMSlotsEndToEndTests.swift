import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// `--sim-slot n` on the dual-SIM device profile (quectel-em160r-dual-sim, MBIM): the slot
/// switched under the modem's lock before the bearer comes up, the carrier seeing the SIM in
/// the new slot, the slot left active afterwards, a switch refused while a bearer is up, and
/// empty slots and eSIMs without a profile named as such; `doctor`'s SIM-slot finding on each.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct SIMSlotsEndToEndTests {
    /// The first SIM's number (slot 1) and the second's (slot 2).
    static let first = SimulatedSIM.defaultMSISDN(index: 0), second = "+447940448597"

    /// One dual-SIM modem with a SIM in each slot, slot 1 active.
    static var twoSIMs: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0)]
        scenario.modems[0].device = .dualSIM
        var card = SimulatedSIM(index: 7)
        card.msisdn = second
        scenario.modems[0].secondSlot = SecondSIMSlot(esim: false, sim: card)
        return scenario
    }

    /// Modem 0: an eSIM without profile in slot 2; modem 1: an empty slot 2; modem 2: one slot.
    static var emptySlots: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems = (0 ..< 3).map { SimulatedModem(index: $0) }
        scenario.modems[0].device = .dualSIM
        scenario.modems[0].secondSlot = SecondSIMSlot(esim: true, sim: nil)
        scenario.modems[1].device = .dualSIM
        scenario.modems[1].secondSlot = SecondSIMSlot(esim: false, sim: nil)
        return scenario
    }

    /// Modem 0: SIM in slot 1, slot 2 empty and active; modem 1: an eSIM without profile
    /// active in slot 2, SIM in slot 1; modem 2: both slots hold a SIM, slot 1 active.
    static var wrongSlotActive: Scenario {
        var scenario = emptySlots
        scenario.modems[0].secondSlot = SecondSIMSlot(esim: false, sim: nil)
        scenario.modems[1].secondSlot = SecondSIMSlot(esim: true, sim: nil)
        scenario.modems[0].activeSlot = 2
        scenario.modems[1].activeSlot = 2
        scenario.modems[2].device = .dualSIM
        scenario.modems[2].secondSlot = SecondSIMSlot(esim: false, sim: SimulatedSIM(index: 7))
        return scenario
    }

    /// The slots `cellpath modems --json` lists for modem `n`: (number, content, active).
    static func slots(_ device: SimulatedDevice, modem n: Int = 0) throws -> [String] {
        let listed = try device.cellpath(["modems", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let sim = try JSONValue.parse(listed.stdout)["modems"]?.array?[n]["sim"]
        return sim?["slots"]?.array?.map {
            "\($0["slot"]?.int ?? 0) \($0["content"]?.string ?? "?")\($0["active"] == .bool(true) ? " active" : "")"
        } ?? []
    }

    @Test func bearerUpFetchAndChecksOnTheSecondSlotWhichStaysActive() throws {
        try SimulatedDevice.with(Self.twoSIMs, connect: false) { device in
            #expect(try Self.slots(device) == ["1 sim active", "2 sim"])

            // bearer up on slot 2: the modem uses the second SIM, and the carrier sees it.
            let up = try device.cellpath(["bearer", "up", "--sim-slot", "2", "-v"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(up.stderr.contains("switched to SIM slot 2"), "\(up.stderr)")
            #expect(try Self.slots(device) == ["1 sim", "2 sim active"])
            let world = try device.status()["modems"]?.array?[0]
            // `sim status` masks the number but its last two digits: the second SIM's end in 97.
            #expect(world?["sim"]?["msisdn"]?.string == "+••••97", "the carrier's view: \(String(describing: world))")

            // Another command may not switch away while that bearer is up (kept by bearer up).
            let refused = try device.cellpath([
                "fetch", "-m", "0", "--sim-slot", "1", "--json", "http://mno.carrier.test/"
            ])
            #expect(refused.status == 75, "\(refused.stderr)")
            #expect(
                refused.stderr.contains(
                    "modem 0's bearer is up on SIM slot 2: cellpath bearer up keeps it, and switching to slot 1 would take it down"
                ), "\(refused.stderr)")
            #expect(try Self.slots(device) == ["1 sim", "2 sim active"])
            #expect(try device.cellpath(["bearer", "down"]).status == 0)

            // A check on slot 1 switches back; the first SIM's number is verified there.
            let onFirst = try device.cellpath([
                "subscriber-check", Self.first, "-m", "0", "--sim-slot", "1", "--direct", "--json"
            ])
            #expect(onFirst.status == 0, "\(onFirst.stderr)")
            #expect(try JSONValue.parse(onFirst.stdout)["outcome"]?.string == "verified")
            #expect(try Self.slots(device) == ["1 sim active", "2 sim"])

            // fetch -m on slot 2, through the bearer; the slot stays active afterwards.
            let fetch = try device.cellpath([
                "fetch", "-m", "0", "--sim-slot", "2", "--json", "http://mno.carrier.test/"
            ])
            #expect(
                try JSONValue.parse(fetch.stdout).hops.first?["local_address"]?.string == "100.64.23.10",
                "\(fetch.stderr)")
            #expect(try Self.slots(device) == ["1 sim", "2 sim active"])
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")

            // Field runs on slot 2: the second SIM's number is verified each time; without
            // --sim-slot the slot left active is used, where the first number is not verified.
            let runs = try device.cellpath([
                "subscriber-check", Self.second, "-m", "0", "--sim-slot", "2", "--repeat", "2", "--direct", "--json"
            ])
            #expect(runs.status == 0, "\(runs.stderr)")
            let outcomes = runs.stdout.split(separator: "\n").compactMap {
                try? JSONValue.parse(String($0))["outcome"]?.string
            }
            #expect(outcomes.filter { $0 == "verified" }.count == 2, "\(runs.stdout)")
            let other = try device.cellpath(["subscriber-check", Self.first, "-m", "0", "--direct", "--json"])
            #expect(other.status == 1, "\(other.stderr)")
            #expect(try JSONValue.parse(other.stdout)["outcome"]?.string == "not_verified")
        }
    }

    @Test func doctorListsTheSlotsAndNamesTheSlotToUseWhenTheActiveOneHoldsNoSIM() throws {
        try SimulatedDevice.with(Self.wrongSlotActive, connect: false) { device in
            let result = try device.cellpath(["doctor", "--json"])
            let checks = try JSONValue.parse(result.stdout)["checks"]?.array ?? []
            func slots(_ modem: Int) -> JSONValue? {
                checks.first { $0["check"]?.string == "sim_slots" && $0["modem"]?.int == modem }
            }
            let empty = try #require(slots(0), "\(result.stdout)")
            #expect(empty["status"]?.string == "warn", "\(empty)")
            #expect(empty["summary"]?.string == "the active slot 2 is empty", "\(empty)")
            #expect(empty["evidence"]?.array == [.string("slot 1: ready"), .string("slot 2: empty (active)")])
            #expect(empty["remedy"]?.string == "use slot 1, which holds a SIM: cellpath bearer up --sim-slot 1")

            let esim = try #require(slots(1), "\(result.stdout)")
            #expect(esim["status"]?.string == "warn", "\(esim)")
            #expect(
                esim["summary"]?.string == "the active slot 2 holds an eSIM without an enabled profile", "\(esim)")
            #expect(
                esim["evidence"]?.array == [
                    .string("slot 1: ready"), .string("slot 2: eSIM without an enabled profile (active)")
                ])
            #expect(esim["remedy"]?.string?.contains("--sim-slot 1") == true, "\(esim)")

            let ready = try #require(slots(2), "\(result.stdout)")
            #expect(ready["status"]?.string == "pass", "\(ready)")
            #expect(ready["summary"]?.string == "slot 1 of 2 is active and holds a SIM", "\(ready)")
            #expect(ready["remedy"] == .null)

            // People read the same finding.
            let human = try device.cellpath(["doctor", "-m", "0"])
            #expect(human.stdout.contains("WARN  sim_slots (modem 0): the active slot 2 is empty"), "\(human.stdout)")
            #expect(human.stdout.contains("      slot 2: empty (active)"), "\(human.stdout)")
            #expect(human.stdout.contains("remedy: use slot 1, which holds a SIM: cellpath bearer up --sim-slot 1"))
        }
    }

    @Test func emptySlotsESIMsWithoutProfileAndSlotsThatDoNotExistAreNamed() throws {
        try SimulatedDevice.with(Self.emptySlots, connect: false) { device in
            let esim = try device.cellpath(["bearer", "up", "-m", "0", "--sim-slot", "2"])
            #expect(esim.status == 69, "\(esim.stderr)")
            #expect(esim.stderr.contains("the eSIM in slot 2 has no enabled profile"), "\(esim.stderr)")
            #expect(esim.stderr.contains("enable one with your eSIM tool, e.g. lpac"), "\(esim.stderr)")
            #expect(!esim.stderr.contains("insert a SIM"), "\(esim.stderr)")
            #expect(try Self.slots(device, modem: 0) == ["1 sim", "2 esim-without-profile active"])
            let listed = try JSONValue.parse(device.cellpath(["modems", "--json"]).stdout)["modems"]?.array?[0]["sim"]
            #expect(listed?["state"]?.string == "esim-without-profile")
            #expect(listed?["problem"]?.string == "the eSIM in slot 2 has no enabled profile")

            let empty = try device.cellpath([
                "subscriber-check", Self.first, "-m", "1", "--sim-slot", "2", "--direct"
            ])
            #expect(empty.status == 69, "\(empty.stderr)")
            #expect(empty.stderr.contains("no SIM in slot 2"), "\(empty.stderr)")
            let table = try device.cellpath(["modems"])
            #expect(table.stdout.contains("no SIM in slot 2"), "\(table.stdout)")

            let third = try device.cellpath(["bearer", "up", "-m", "1", "--sim-slot", "3"])
            #expect(third.status == 64, "\(third.stderr)")
            #expect(third.stderr.contains("modem 1 has SIM slots 1 to 2: there is no slot 3"), "\(third.stderr)")

            for command in [
                ["bearer", "up", "-m", "2", "--sim-slot", "2"],
                ["fetch", "-m", "2", "--sim-slot", "1", "http://mno.carrier.test/"]
            ] {
                let single = try device.cellpath(command)
                #expect(single.status == 64, "\(command): \(single.stderr)")
                #expect(
                    single.stderr.contains("modem 2 reports no second SIM slot: --sim-slot needs a dual-SIM modem"),
                    "\(command): \(single.stderr)")
            }
            #expect(try device.status()["modems"]?.array?.allSatisfy { $0["bearer"]?.string == "disconnected" } == true)
        }
    }
}
