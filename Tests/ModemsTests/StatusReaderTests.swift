import CellpathCore
import ModemDiscovery
import Modems
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// How a read puts the parts of a modem's status together, what it opens (proxy or not), and
/// what it leaves behind.
@Suite(.serialized, .timeLimit(.minutes(2)), .ownThreads)
struct StatusReaderTests {
    @Test func aProtocolErrorInOnePartIsAWarningAndLeavesItEmpty() async throws {
        let lines = LogLines()
        let backend = FakeBackend(
            signal: .failure(
                ModemError(
                    .protocol, .unavailable, operation: "query the signal state of fake0",
                    reason: "the modem answered NoDeviceSupport (MBIM status)")))
        let status = try await ModemStatusReader.read(backend, logger: lines.logger(.warning))
        #expect(status.signal == nil)
        #expect(status.imei == "350000000000009")
        #expect(status.registration?.state == .home)
        #expect(status.bearer?.state == .disconnected)
        #expect(
            lines.all == [
                "warning: couldn't query the signal state of fake0: the modem answered NoDeviceSupport (MBIM status)"
            ])
    }

    @Test func aTransportErrorInAnyPartFailsTheRead() async throws {
        let timeout = ModemError(
            .transport, .temporary, operation: "query the register state of fake0", reason: "no answer within 2 s")
        let backend = FakeBackend(registration: .failure(timeout))
        await #expect(throws: timeout) { try await ModemStatusReader.read(backend, logger: .silent) }
    }

    @Test func theHomeOperatorIsAskedOnlyOfAReadySIM() async throws {
        let backend = FakeBackend(sim: .success(SIMStatus(state: .pinRequired, pinRetries: 3)))
        let status = try await ModemStatusReader.read(backend, logger: .silent)
        #expect(status.homeOperator == nil)
        #expect(await backend.asked.contains("homeOperator") == false)
        #expect(await backend.asked.contains("registration"))
    }

    /// Client IDs go back to the modem after every read: twenty reads leave none allocated.
    /// The control shows that the count sees a client that keeps its ID.
    @Test func repeatedReadsLeaveNoQMIClientIDAllocated() async throws {
        let fleet = try SimulatedFleet([.test(.qmi, 1)])
        for _ in 0 ..< 20 {
            let status = try await fleet.status(0)
            #expect(status.imei == "350000000000001")
        }
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
        let kept = try fleet.client(0, "--dms-get-ids", "--client-no-release-cid")
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(fleet.device(0).allocatedQMIClientIDs == 1)
    }

    /// Debian's proxies refuse clients that are not root: another user opens the port itself.
    @Test(arguments: [SimulatorScenario.ModemProtocol.mbim, .qmi])
    func withoutRootTheProxyIsSkipped(_ kind: SimulatorScenario.ModemProtocol) async throws {
        let fleet = try SimulatedFleet([.test(kind, 1)])
        let lines = LogLines()
        let reader = ModemStatusReader(
            access: ModemAccess(useProxy: true, isRoot: false, timeout: .seconds(10)), logger: lines.logger())
        let status = try await reader.status(of: fleet.modems[0])
        #expect(status.imei == "350000000000001")
        let proxy = kind == .mbim ? "mbim-proxy" : "qmi-proxy"
        let port = try #require(fleet.device(0).devicePath)
        #expect(lines.all.contains("debug: \(proxy) accepts root clients only: opening \(port) directly"))
        #expect(lines.all.contains("debug: cdc-wdm0: \(kind == .mbim ? "MBIM" : "QMI") session open"))
    }

    @Test(
        .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)),
        arguments: [SimulatorScenario.ModemProtocol.mbim, .qmi])
    func throughTheProxy(_ kind: SimulatorScenario.ModemProtocol) async throws {
        let fleet = try SimulatedFleet([.test(kind, 1)])
        let lines = LogLines()
        let reader = ModemStatusReader(
            access: ModemAccess(useProxy: true, isRoot: true, timeout: .seconds(20)), logger: lines.logger())
        for _ in 0 ..< 3 {
            let status = try await reader.status(of: fleet.modems[0])
            #expect(status.sim?.imsi == "234150000000001")
            #expect(status.registration?.state == .home)
        }
        let proxy = kind == .mbim ? "mbim-proxy" : "qmi-proxy"
        #expect(lines.all.contains("debug: cdc-wdm0: \(kind == .mbim ? "MBIM" : "QMI") session open through \(proxy)"))
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    @Test func aPortThatDoesNotExistIsUnavailable() async throws {
        let port = ControlPort(name: "cdc-wdm9", devicePath: "/nonexistent/cdc-wdm9", protocol: .mbim)
        let error = await #expect(throws: ModemError.self) {
            _ = try await ModemBackends.open(port, access: ModemAccess(useProxy: false), logger: .silent)
        }
        #expect(error?.kind == .unavailable)
        #expect(error?.message == "couldn't open /nonexistent/cdc-wdm9: no such device (the modem was unplugged?)")
    }
}

/// A backend that answers from its fields and records what it was asked.
actor FakeBackend: ModemBackend {
    nonisolated let port = ControlPort(name: "fake0", devicePath: "/dev/fake0", protocol: .mbim)
    nonisolated let backendName = ModemBackendName.mbim
    var sim: Result<SIMStatus, ModemError>
    var registration: Result<Registration, ModemError>
    var signal: Result<Signal?, ModemError>
    private(set) var asked: [String] = []

    init(
        sim: Result<SIMStatus, ModemError> = .success(SIMStatus(state: .ready, imsi: "001010000000009")),
        registration: Result<Registration, ModemError> = .success(Registration(state: .home)),
        signal: Result<Signal?, ModemError> = .success(Signal(rssiDbm: -70))
    ) {
        self.sim = sim
        self.registration = registration
        self.signal = signal
    }

    func identity() async throws(ModemError) -> ModemIdentity {
        asked.append("identity")
        return ModemIdentity(model: "Fake", imei: "350000000000009")
    }
    func sim() async throws(ModemError) -> SIMStatus { asked.append("sim"); return try sim.get() }
    func radio() async throws(ModemError) -> RadioState { asked.append("radio"); return .on }
    func homeOperator() async throws(ModemError) -> NetworkOperator? {
        asked.append("homeOperator")
        return NetworkOperator(id: "001-01", name: "Fake")
    }
    func registration() async throws(ModemError) -> Registration {
        asked.append("registration"); return try registration.get()
    }
    func signal() async throws(ModemError) -> Signal? { asked.append("signal"); return try signal.get() }
    func radioContext() async throws(ModemError) -> RadioContext {
        RadioContext(source: backendName.rawValue, registration: try registration.get())
    }
    func packetService() async throws(ModemError) -> PacketServiceState {
        asked.append("packetService"); return .attached
    }
    func bearer() async throws(ModemError) -> BearerStatus {
        asked.append("bearer"); return BearerStatus(state: .disconnected)
    }
    func simState() async throws(ModemError) -> SIMStatus { asked.append("simState"); return try sim.get() }
    func bearerState() async throws(ModemError) -> BearerState { asked.append("bearerState"); return .disconnected }
    func ipConfiguration() async throws(ModemError) -> BearerStatus {
        asked.append("ipConfiguration"); return BearerStatus(state: .connected)
    }
    func close() async { asked.append("close") }
    // Reading changes nothing: these are recorded, and a reader test expects none of them.
    func unlockSIM(pin: String) async throws(ModemError) -> SIMStatus {
        asked.append("unlockSIM"); return try sim.get()
    }
    func setRadio(_ state: RadioState) async throws(ModemError) { asked.append("setRadio") }
    func attachPacketService() async throws(ModemError) { asked.append("attachPacketService") }
    func connect(_ settings: BearerSettings) async throws(ModemError) -> BearerHandle {
        asked.append("connect"); return BearerHandle()
    }
    func disconnect(_ handle: BearerHandle?) async throws(ModemError) -> Bool {
        asked.append("disconnect"); return false
    }
    func renewTimeLimit() async {}
    func releaseCheckClients() async { asked.append("releaseCheckClients") }
    func indications() async throws(ModemError) -> AsyncStream<ModemIndication> {
        asked.append("indications")
        return AsyncStream { $0.finish() }
    }
    func followBearer(_ handle: BearerHandle?) async -> BearerFollowing { asked.append("followBearer"); return .none }
}
