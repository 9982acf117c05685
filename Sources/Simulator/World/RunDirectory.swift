import CellpathCore
import Glibc
import SystemSupport

/// The files of one running world under `/run/cellpath-sim/<prefix>/`: pid files, the daemon
/// log, the control socket, the request log, the effective scenario and the test CA.
public struct RunDirectory: Sendable, Equatable {
    /// The directory itself.
    public var path: String

    /// The parent of every world's run directory.
    public static let root = "/run/cellpath-sim"

    public init(prefix: String) { path = "\(Self.root)/\(prefix)" }

    /// The daemon's pid file.
    public var daemonPIDFile: String { "\(path)/daemon.pid" }
    /// The daemon's log (stdout and stderr of a detached daemon and its dnsmasq children).
    public var logFile: String { "\(path)/daemon.log" }
    /// The control socket (`sim status`, `sim bearer …`).
    public var controlSocket: String { "\(path)/control.sock" }
    /// One JSON line per request served by the fake API and the carrier endpoint (`sim log`).
    public var requestLog: String { "\(path)/requests.log" }
    /// The fake API's project credentials (`SimulatorCredentials`).
    public var credentialsFile: String { "\(path)/credentials.json" }
    /// The effective scenario (validated, defaults filled in).
    public var scenarioFile: String { "\(path)/scenario.json" }
    /// The test CA certificate that clients trust (`CELLPATH_CA_FILE`).
    public var caCertificate: String { "\(path)/tls/ca.pem" }
    /// The CA's private key (only used to sign the server certificate).
    public var caKey: String { "\(path)/tls/ca.key" }
    /// The fake API's certificate (chain: server certificate, then CA) and key.
    public var serverCertificate: String { "\(path)/tls/server.pem" }
    public var serverKey: String { "\(path)/tls/server.key" }
    /// The fake API's webhook signing key (RSA, PEM; its public half is at `/.well-known/jwks.json`).
    public var webhookKey: String { "\(path)/webhook.key" }
    /// The fake Vonage application's private key (RSA, PEM, mode 0600): `sim env` names it.
    public var vonageApplicationKey: String { "\(path)/vonage-application.key" }
    /// The world's CAMARA client key (EC P-256, PEM; the fake operator holds its public half).
    public var camaraClientKey: String { "\(path)/camara-client.key" }
    /// The simulated modems' sysfs tree (`CELLPATH_SYSFS_ROOT`) and control ports (`CELLPATH_DEV_ROOT`).
    public var sysfsRoot: String { "\(path)/sys" }
    public var devRoot: String { "\(path)/dev" }
    /// udev's database of the world's modems (`data/+usb:1-N` of a modem ModemManager ignores).
    public var udevRoot: String { "\(path)/udev" }
    /// The device's own bearer records (`CELLPATH_STATE_DIR`, which cellpath creates): each world's
    /// modems are named cdc-wdm0… like every other world's, so their records must not meet in
    /// the host's `/run/cellpath`; they go with the world at `sim down`.
    public var stateDirectory: String { "\(path)/state" }
    /// The tru.ID access tokens of cellpath run in the world (`CELLPATH_TOKEN_CACHE`): the fake
    /// API's tokens stay out of the user's cache, and go with the world at `sim down`.
    public var tokenCache: String { "\(path)/tokens.json" }
    /// ModemManager's files (`ModemManagerHost`): its bus, scripts, pid files and logs.
    public var modemManagerDirectory: String { "\(path)/modemmanager" }
    /// The world's private D-Bus system bus (`DBUS_SYSTEM_BUS_ADDRESS`), when it runs ModemManager.
    public var busSocket: String { "\(modemManagerDirectory)/bus" }
    public var busAddress: String { "unix:path=\(busSocket)" }
    /// The pid file of the dnsmasq child named `name` (`carrier`, `wifi`).
    public func dnsPIDFile(_ name: String) -> String { "\(path)/dnsmasq-\(name).pid" }
}
