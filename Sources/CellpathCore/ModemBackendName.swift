/// Who serves a modem's calls, as the output, the records and the traces name it: its MBIM or
/// QMI port (opened directly or through its proxy), or ModemManager's D-Bus API.
public enum ModemBackendName: String, Sendable {
    case mbim
    case qmi
    case modemManager = "modemmanager"
}
