import CellpathCore
import Modems
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// The MBIM and QMI backends against simulated modems (which speak the protocols on ptys as
/// hardware does), opened directly: what each reads, state by state. No root.
@Suite(.serialized, .timeLimit(.minutes(2)), .ownThreads)
struct BackendTests {
    static let protocols: [SimulatorScenario.ModemProtocol] = [.mbim, .qmi]

    @Test(arguments: protocols)
    func readsWhatTheModemReports(_ kind: SimulatorScenario.ModemProtocol) async throws {
        let fleet = try SimulatedFleet([.test(kind, 1)])
        let status = try await fleet.status(0)
        #expect(status.manufacturer == "Maker 1")
        #expect(status.model == "Model 1")
        #expect(status.firmware == "FW.1")
        #expect(status.imei == "350000000000001")
        #expect(status.radio == .on)
        #expect(
            status.sim
                == SIMStatus(
                    state: .ready, iccid: "8944000000000000001", imsi: "234150000000001", msisdns: ["+447700900001"]))
        #expect(status.homeOperator == NetworkOperator(id: "234-15", name: "Test Net"))
        #expect(
            status.registration
                == Registration(
                    state: .home, servingOperator: NetworkOperator(id: "234-15", name: "Test Net"),
                    accessTechnology: .lte))
        #expect(status.signal?.rssiDbm == -67)
        #expect(status.packetService == .attached)
        #expect(status.bearer == BearerStatus(state: .disconnected))
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    @Test(arguments: protocols)
    func aBearerConnectedByAnotherClientIsReadWithItsAddress(_ kind: SimulatorScenario.ModemProtocol) async throws {
        let fleet = try SimulatedFleet([.test(kind, 1)])
        let connect =
            kind == .mbim
            ? try fleet.client(0, "--connect=apn=internet", "--no-close")
            : try fleet.client(0, "--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid")
        #expect(connect.status == 0, "\(connect.stderr)")
        let bearer = try #require(try await fleet.status(0).bearer)
        #expect(bearer.state == .connected)
        #expect(bearer.ipv4Address == "100.64.23.10")
        #expect(bearer.prefixLength == 32)
        #expect(bearer.gateway == "100.64.0.1")
        #expect(bearer.dnsServers == ["100.64.0.53"])
        #expect(bearer.mtu == 1500)
        if kind == .qmi { #expect(bearer.apn == "internet") }
        // Reading leaves the bearer up.
        #expect(fleet.bearerNetwork.isConnected(modemIndex: 0))
    }

    @Test(arguments: protocols)
    func noSIMIsAState(_ kind: SimulatorScenario.ModemProtocol) async throws {
        let fleet = try SimulatedFleet([.test(kind, 1, sim: .some(nil))])
        let status = try await fleet.status(0)
        #expect(status.sim == SIMStatus(state: .absent))
        #expect(status.homeOperator == nil)
        #expect(status.registration?.state == .notRegistered)
        #expect(status.packetService == .detached)
        #expect(status.bearer?.state == .disconnected)
        #expect(status.imei == "350000000000001")
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    @Test(arguments: protocols)
    func aPINLockedSIMIsAStateWithItsRetries(_ kind: SimulatorScenario.ModemProtocol) async throws {
        let sim = SimulatedSIM(
            iccid: "8944000000000000001", imsi: "234150000000001", pinLocked: true, pinAttemptsLeft: 2)
        let fleet = try SimulatedFleet([.test(kind, 1, sim: sim)])
        let status = try await fleet.status(0)
        #expect(status.sim == SIMStatus(state: .pinRequired, iccid: "8944000000000000001", pinRetries: 2))
        #expect(status.homeOperator == nil)
        #expect(status.registration?.state == .notRegistered)
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    @Test(arguments: protocols)
    func theRadioOffIsAState(_ kind: SimulatorScenario.ModemProtocol) async throws {
        var faults = ModemFaults()
        faults.radioOff = true
        let fleet = try SimulatedFleet([.test(kind, 1, faults: faults)])
        let status = try await fleet.status(0)
        #expect(status.radio == .off)
        #expect(status.registration?.state == .notRegistered)
        #expect(status.signal == nil)
        #expect(status.packetService == .detached)
        #expect(status.sim?.state == .ready)
    }

    @Test(arguments: protocols)
    func aRefusedRegistrationIsAState(_ kind: SimulatorScenario.ModemProtocol) async throws {
        var faults = ModemFaults()
        faults.registration = .denied
        let fleet = try SimulatedFleet([.test(kind, 1, faults: faults)])
        let registration = try #require(try await fleet.status(0).registration)
        #expect(registration.state == .denied)
        #expect(registration.servingOperator == nil)
        // MBIM carries the network's reason; QMI's serving system has none.
        #expect(registration.networkError == (kind == .mbim ? "plmn-not-allowed" : nil))
    }

    @Test(arguments: protocols)
    func searchingAndRoamingAreStates(_ kind: SimulatorScenario.ModemProtocol) async throws {
        var faults = ModemFaults()
        faults.registration = .searching
        let fleet = try SimulatedFleet([.test(kind, 1, faults: faults), .test(kind, 2, roaming: true)])
        #expect(try await fleet.status(0).registration?.state == .searching)
        let roaming = try await fleet.status(1)
        #expect(roaming.registration?.state == .roaming)
        #expect(roaming.registration?.servingOperator?.id == "234-15")
    }

    @Test(arguments: protocols)
    func slowAnswersWithinTheTimeAreRead(_ kind: SimulatorScenario.ModemProtocol) async throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 50
        let fleet = try SimulatedFleet([.test(kind, 1, faults: faults)])
        let status = try await fleet.status(0, timeout: .seconds(20))
        #expect(status.imei == "350000000000001")
        #expect(status.registration?.state == .home)
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    @Test(arguments: protocols)
    func answersLaterThanTheTimeoutAreATransportTimeout(_ kind: SimulatorScenario.ModemProtocol) async throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 3000
        let fleet = try SimulatedFleet([.test(kind, 1, faults: faults)])
        let error = await #expect(throws: ModemError.self) { try await fleet.status(0, timeout: .milliseconds(500)) }
        #expect(error?.layer == .transport)
        #expect(error?.kind == .temporary)
        // QMI opens without a round trip (no version info): its first request is the first allocation.
        #expect(
            error?.message
                == (kind == .mbim
                    ? "couldn't open cdc-wdm0: no answer within 0.5 s"
                    : "couldn't allocate a DMS client ID on cdc-wdm0: no answer within 0.5 s"))
        #expect(error?.hint != nil)
    }

    /// The modem allocates a client ID when it reads the request: an answer that comes after the
    /// time is up still brings its ID, which must be released.
    @Test func aClientIDAllocatedAfterTheTimeoutIsReleased() async throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 1300
        let fleet = try SimulatedFleet([.test(.qmi, 1, faults: faults)])
        let error = await #expect(throws: ModemError.self) { try await fleet.status(0, timeout: .seconds(1)) }
        #expect(error?.message == "couldn't allocate a DMS client ID on cdc-wdm0: no answer within 1 s")
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    @Test func aClientIDAllocatedAfterACancelIsReleased() async throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 700
        let fleet = try SimulatedFleet([.test(.qmi, 1, faults: faults)])
        let modem = fleet.modems[0]
        let lines = LogLines()
        let reading = Task {
            try await ModemStatusReader(
                access: ModemAccess(useProxy: false, timeout: .seconds(30)), logger: lines.logger()
            ).status(of: modem)
        }
        // Cancelled once the port is open: the allocation, its first request, is answered 0.7 s later.
        let deadline = ContinuousClock.now + .seconds(20)
        while !lines.all.contains(where: { $0.contains("cdc-wdm0: QMI session open") }), ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(100))
        reading.cancel()
        let error = await #expect(throws: ModemError.self) { try await reading.value }
        #expect(error?.kind == .cancelled)
        #expect(error?.message == "couldn't allocate a DMS client ID on cdc-wdm0: cancelled")
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    @Test(arguments: protocols)
    func garbageFramesAreSkipped(_ kind: SimulatorScenario.ModemProtocol) async throws {
        var faults = ModemFaults()
        faults.garbageFrames = 3
        let fleet = try SimulatedFleet([.test(kind, 1, faults: faults)])
        let status = try await fleet.status(0)
        #expect(status.imei == "350000000000001")
        #expect(status.sim?.imsi == "234150000000001")
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    /// The read ends when the port hangs up, not when its time is up (which is beyond the
    /// test's time limit).
    @Test(.timeLimit(.minutes(1)), arguments: protocols)
    func aPortThatVanishesIsATransportError(_ kind: SimulatorScenario.ModemProtocol) async throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 400
        let fleet = try SimulatedFleet([.test(kind, 1, faults: faults)])
        let modem = fleet.modems[0]
        let reading = Task {
            try await ModemStatusReader(access: ModemAccess(useProxy: false, timeout: .seconds(300)), logger: .silent)
                .status(of: modem)
        }
        try await Task.sleep(for: .milliseconds(900))
        fleet.device(0).unplug()
        let error = await #expect(throws: ModemError.self) { try await reading.value }
        #expect(error?.layer == .transport)
        #expect(error?.kind == .unavailable)
        #expect(
            error?.message.hasSuffix("\(modem.ports[0].devicePath) vanished (the modem was unplugged or reset)")
                == true,
            "\(String(describing: error))")
    }

    @Test(arguments: protocols)
    func cancellingAReadStopsItAndReleasesTheClientIDs(_ kind: SimulatorScenario.ModemProtocol) async throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 300
        let fleet = try SimulatedFleet([.test(kind, 1, faults: faults)])
        let modem = fleet.modems[0]
        let reading = Task {
            try await ModemStatusReader(access: ModemAccess(useProxy: false, timeout: .seconds(30)), logger: .silent)
                .status(of: modem)
        }
        try await Task.sleep(for: .milliseconds(1500))
        if kind == .qmi { #expect(fleet.device(0).allocatedQMIClientIDs > 0, "the read is past allocating a client") }
        reading.cancel()
        let error = await #expect(throws: ModemError.self) { try await reading.value }
        #expect(error?.kind == .cancelled)
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }
}
