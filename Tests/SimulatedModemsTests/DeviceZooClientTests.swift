import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// The real mbimcli and qmicli on each zoo profile's control port: identity, SIM, registration,
/// and a connect where the profile's firmware lets one through without an unlock.
@Suite("Device zoo with mbimcli and qmicli", .serialized, .ownThreads)
struct DeviceZooClientTests {
    /// The zoo profiles that have an MBIM or QMI port.
    static let served = DeviceProfile.zoo.filter { $0.controlProtocol != nil }.map(\.name)

    static func modem(_ name: DeviceProfile.Name) -> SimulatedModem {
        let proto = DeviceProfile.named(name).controlProtocol ?? .mbim
        var modem = SimulatedModem(protocol: proto, imei: "356789012345675")
        modem.device = name
        modem.manufacturer = DeviceProfile.named(name).manufacturer
        modem.model = DeviceProfile.named(name).model
        return modem
    }

    @Test(arguments: served)
    func theControlPortAnswersIdentitySIMAndRegistration(_ name: DeviceProfile.Name) throws {
        let profile = DeviceProfile.named(name)
        let fleet = try SimulatedFleet([Self.modem(name)])
        let port = try #require(fleet.device(0).devicePath)
        #expect(port.hasSuffix("/dev/\(try #require(profile.controlDevice(index: 0)).name)"))
        if profile.controlProtocol == .mbim {
            let caps = try fleet.client(0, "--query-device-caps")
            #expect(caps.status == 0, "\(caps.stderr)")
            #expect(field("Device ID", in: caps.stdout) == "356789012345675", "\(caps.stdout)")
            #expect(field("Hardware info", in: caps.stdout) == profile.model)
            let ready = try fleet.client(0, "--query-subscriber-ready-status")
            #expect(field("Ready state", in: ready.stdout) == "initialized", "\(ready.stdout)")
            if profile.fccLocked {
                // Radio-on is refused until the lock is lifted; then the modem registers.
                #expect(try fleet.client(0, "--set-radio-state=on").stderr.contains("OperationNotAllowed"))
                fleet.device(0).unlockFCC()
                var on = try fleet.client(0, "--set-radio-state=on")
                for _ in 0 ..< 20 where on.status != 0 {
                    usleep(50_000)
                    on = try fleet.client(0, "--set-radio-state=on")
                }
                #expect(on.status == 0, "\(on.stderr)")
            }
            let registration = try fleet.client(0, "--query-registration-state")
            #expect(field("Register state", in: registration.stdout) == "home", "\(registration.stdout)")
        } else {
            let ids = try fleet.client(0, "--dms-get-ids")
            #expect(field("IMEI", in: ids.stdout) == "356789012345675", "\(ids.stdout)\(ids.stderr)")
            let model = try fleet.client(0, "--dms-get-model")
            #expect(field("Model", in: model.stdout) == profile.model, "\(model.stdout)")
            let serving = try fleet.client(0, "--nas-get-serving-system")
            #expect(field("Registration state", in: serving.stdout) == "registered", "\(serving.stdout)")
            if !profile.qmi.dmsUIMRefused {
                let imsi = try fleet.client(0, "--dms-uim-get-imsi")
                #expect(
                    field("IMSI", in: imsi.stdout) == fleet.device(0).modem.sim?.imsi,
                    "\(imsi.stdout)\(imsi.stderr)")
            }
        }
    }

    /// Profiles whose firmware connects without an FCC unlock.
    static let connectable = served.filter { !DeviceProfile.named($0).fccLocked }

    @Test(arguments: connectable)
    func theControlPortConnectsABearer(_ name: DeviceProfile.Name) throws {
        let fleet = try SimulatedFleet([Self.modem(name)])
        let connect =
            DeviceProfile.named(name).controlProtocol == .mbim
            ? try fleet.client(0, "--connect=apn=internet", "--no-close")
            : try fleet.client(0, "--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid")
        #expect(connect.status == 0, "\(connect.stdout)\(connect.stderr)")
        #expect(fleet.bearerNetwork.isConnected(modemIndex: 0))
    }
}
