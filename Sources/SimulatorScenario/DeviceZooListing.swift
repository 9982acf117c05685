/// One line of `cellpath sim profiles`: what a device profile presents, with the names its
/// first modem (index 0) gets.
public struct DeviceZooRow: Sendable, Equatable {
    /// The scenario name (`modems[i].device`).
    public let name: String
    public let models: String
    /// `usb` or `pcie`.
    public let bus: String
    /// `vvvv:pppp` (USB VID:PID or PCI vendor:device), lower-case hex.
    public let ids: String
    public let driver: String
    /// `mbim`, `qmi`, or `none`.
    public let `protocol`: String
    /// The character devices with their type: `cdc-wdm0 (MBIM)`, `wwan0mbim0 (MBIM)`, `wwan0at0 (AT)`.
    public let ports: [String]
    /// The data net device, or `none`.
    public let netDevice: String

    public init(profile: DeviceProfile) {
        name = profile.name.rawValue
        models = profile.models
        bus = profile.bus.rawValue
        ids = "\(DeviceProfile.hex4(profile.vendorID)):\(DeviceProfile.hex4(profile.productID))"
        driver = profile.driver
        `protocol` = profile.controlProtocol?.rawValue ?? "none"
        ports = profile.ports(index: 0).map { "\($0.name) (\($0.type))" }
        netDevice = profile.netDeviceName(index: 0) ?? "none"
    }

    /// Every profile of the zoo, in catalogue order (the idealised `simulated` shape first).
    public static var all: [DeviceZooRow] {
        ([DeviceProfile.simulated(.mbim)] + DeviceProfile.zoo).map(DeviceZooRow.init(profile:))
    }

}
