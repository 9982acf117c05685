import CellpathCLI
import CellpathCore
import CommandLineKit
import ModemDiscovery
import ModemManagerBackend
import Modems

extension ModemBackendChoice {
    /// Opens a modem's backend as this choice says: ModemManager's modem, the control port in
    /// its protocol, or (auto) the port when udev marks the modem `ID_MM_DEVICE_IGNORE=1`, else
    /// ModemManager when it runs on the system bus, else the port. A port of another protocol
    /// than `mbim`/`qmi` names is refused (64).
    package var opener: ModemOpener {
        let choice = self
        return { port, access, logger throws(ModemError) in
            switch choice {
            case .modemmanager:
                return try await ModemManagerService.open(port, access: access, logger: logger)
            case .mbim, .qmi:
                guard port.protocol.rawValue == choice.rawValue else {
                    throw ModemError(
                        .transport, .usage, operation: "open \(port.name) over \(choice.rawValue.uppercased())",
                        reason: "it speaks \(port.protocol.rawValue.uppercased())",
                        hint: "use --backend \(port.protocol.rawValue), modemmanager or auto")
                }
                return try await ModemBackends.open(port, access: access, logger: logger)
            case .auto:
                // Only a modem ModemManager ignores by udev goes direct: one it merely does not
                // list may still be held by its proxy.
                let udev = UdevDatabase(roots: DeviceRoots(environment: ProcessEnvironment.current()))
                if udev.modemManagerIgnores(port) {
                    logger.info("ModemManager ignores \(port.name) (udev \(UdevDatabase.ignoreProperty)=1): direct")
                    return try await ModemBackends.open(port, access: access, logger: logger)
                }
                if await ModemManagerService.isRunning(logger: logger) {
                    return try await ModemManagerService.open(port, access: access, logger: logger)
                }
                return try await ModemBackends.open(port, access: access, logger: logger)
            }
        }
    }
}
