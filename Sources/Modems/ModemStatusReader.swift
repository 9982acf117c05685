import CMBIM
import CQMI
import CellpathCore
import GLibRuntime
import ModemDiscovery

/// Reads a modem's whole status: opens its control port, reads everything `cellpath modems`
/// shows, and closes the port again (releasing QMI client IDs).
public struct ModemStatusReader: Sendable {
    public var access: ModemAccess
    public var logger: Logger
    /// Opens the modem's backend: the direct one of its protocol unless told otherwise.
    public var opener: ModemOpener
    /// Whether the status carries the firmware's traits (`ModemBackend.firmwareTraits`), for a
    /// device capture: a QMI modem answers one more request (WDA).
    public var readsFirmwareTraits: Bool

    public init(
        access: ModemAccess, logger: Logger, opener: @escaping ModemOpener = ModemBackends.direct,
        readsFirmwareTraits: Bool = false
    ) {
        self.access = access
        self.logger = logger
        self.opener = opener
        self.readsFirmwareTraits = readsFirmwareTraits
    }

    /// The status of `modem`, through its first control port. Names that the protocol does not
    /// give (MBIM has no manufacturer) come from the USB device. `expecting`: the IP type of the
    /// bearer as far as it is known (`ModemBackend.expect`).
    public func status(
        of modem: DiscoveredModem, expecting ipType: BearerIPType? = nil
    ) async throws(ModemError) -> ModemStatus {
        let backend = try await opener(modem.ports[0], access, logger)
        if let ipType { await backend.expect(ipType) }
        let result: Result<ModemStatus, ModemError>
        do {
            var status = try await Self.read(backend, logger: logger)
            if readsFirmwareTraits { status.firmwareTraits = try await Self.part(backend.firmwareTraits, logger) }
            result = .success(status)
        } catch {
            result = .failure(error)
        }
        await backend.close()
        var status = try result.get()
        status.manufacturer = status.manufacturer ?? modem.manufacturer
        status.model = status.model ?? modem.model
        status.backend = backend.backendName
        return status
    }

    /// Reads every part of the status. A protocol error in one part (the modem does not support
    /// a query) is logged as a warning and leaves that part empty; a transport error (no
    /// answer in time, the port vanished) fails the whole read.
    public static func read(_ backend: any ModemBackend, logger: Logger) async throws(ModemError) -> ModemStatus {
        func part<Value>(_ read: () async throws(ModemError) -> Value) async throws(ModemError) -> Value? {
            try await Self.part(read, logger)
        }
        var status = ModemStatus()
        if let identity = try await part(backend.identity) {
            status.manufacturer = identity.manufacturer
            status.model = identity.model
            status.firmware = identity.firmware
            status.imei = identity.imei
        }
        status.sim = try await part(backend.sim)
        if let slots = try await part(backend.simSlots) { status.sim?.slots = slots }
        status.radio = try await part(backend.radio)
        if status.sim?.state == .ready {
            status.homeOperator = try await part(backend.homeOperator) ?? nil
        }
        status.registration = try await part(backend.registration)
        status.signal = try await part(backend.signal) ?? nil
        status.packetService = try await part(backend.packetService)
        status.bearer = try await part(backend.bearer)
        return status
    }

    /// One part of the status: nil, with a warning, when the modem refuses it (a protocol error).
    private static func part<Value>(
        _ read: () async throws(ModemError) -> Value, _ logger: Logger
    ) async throws(ModemError) -> Value? {
        do {
            return try await read()
        } catch {
            guard error.layer == .protocol else { throw error }
            logger.warning("\(error.message)")
            return nil
        }
    }
}

/// Settings of libmbim and libqmi for the whole process.
public enum ModemLibraries {
    /// Sends libmbim's and libqmi's log lines to `logger` as debug lines (shown with `-v`) and,
    /// when debug lines are shown, turns on their traces of every message sent and received,
    /// with personal data hidden unless the logger shows it (`--verbose-full`). Call before
    /// opening a modem.
    public static func configure(logger: Logger) {
        let full = logger.disclosure == .full
        GLibLog.route { _, domain, message in
            let library =
                switch domain {
                case "Mbim": "libmbim"
                case "Qmi": "libqmi"
                default: domain ?? "glib"
                }
            let lines = message.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            for line in full ? lines : TraceRedaction.redact(lines) {
                logger.debug("[\(library)] \(line)")
            }
        }
        let traces: gboolean = logger.enabled(.debug) ? 1 : 0
        let personal: gboolean = full ? 1 : 0
        mbim_utils_set_traces_enabled(traces)
        mbim_utils_set_show_personal_info(personal)
        qmi_utils_set_traces_enabled(traces)
        qmi_utils_set_show_personal_info(personal)
    }
}

/// Hides what the libraries' traces show of personal data although asked not to: libqmi 1.32
/// prints the MSISDN of DMS Get MSISDN in full, and the bytes of every TLV it has no name for
/// (a modem's DMS Get MSISDN answer carries the IMSI in one, 0x11); libmbim 1.28 the PIN of a
/// PIN set.
enum TraceRedaction {
    /// TLVs whose value the library does not hide.
    static let personalTLVs = [#""MSISDN""#]
    /// MBIM fields whose value the library does not hide.
    static let secretFields = ["Pin = ", "NewPin = "]

    /// The lines of one traced message with the `value` and `translated` lines of those TLVs,
    /// and those fields, masked. A value holding line feeds (a modem may answer anything) goes on
    /// over as many more lines of its translation, which the bytes of the `value` line count:
    /// those lines are masked whole.
    static func redact(_ lines: [String]) -> [String] {
        var inPersonalTLV = false
        var lineFeedsInValue = 0, continuedLines = 0
        return lines.map { line in
            if continuedLines > 0 {
                continuedLines -= 1
                return "###"
            }
            let field = line.drop { $0 == "<" || $0 == ">" || $0 == " " }
            if let secret = secretFields.first(where: { field.hasPrefix($0) }) {
                return line.prefix(line.count - field.count) + secret + "'###'"
            }
            if field.hasPrefix("type ") {
                inPersonalTLV = personalTLVs.contains { field.contains($0) } || isUnnamed(field)
            }
            guard inPersonalTLV, field.hasPrefix("value ") || field.hasPrefix("translated "),
                let equals = line.firstIndex(of: "=")
            else { return line }
            if field.hasPrefix("value ") {
                // The bytes as libqmi prints them: two hexadecimal digits each, separated by colons.
                lineFeedsInValue =
                    line[line.index(after: equals)...].split(separator: ":").filter {
                        ($0.hasPrefix(" ") ? $0.dropFirst() : $0) == "0A"
                    }
                    .count
            } else {
                continuedLines = lineFeedsInValue
            }
            return line[...equals] + " ###"
        }
    }

    /// A TLV's `type` line without a name (`type   = 0x11`): libqmi does not know what it holds.
    private static func isUnnamed(_ typeField: Substring) -> Bool {
        guard let equals = typeField.firstIndex(of: "=") else { return false }
        return typeField[typeField.index(after: equals)...].drop { $0 == " " }.hasPrefix("0x")
    }
}
