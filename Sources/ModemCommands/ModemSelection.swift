import CellpathCLI
import CellpathCore
import CommandLineKit
import ModemDiscovery

/// One discovered modem and what reading it gave.
package struct ModemReport: Sendable, Equatable {
    package var modem: DiscoveredModem
    package var result: Result<ModemStatus, ModemError>
    /// What else to know of the modem (ModemManager ignores it), its `note`.
    package var note: String?

    package init(modem: DiscoveredModem, result: Result<ModemStatus, ModemError>, note: String? = nil) {
        self.modem = modem
        self.result = result
        self.note = note
    }

    package var status: ModemStatus? { try? result.get() }
    package var error: ModemError? {
        guard case .failure(let error) = result else { return nil }
        return error
    }
}

/// How a command names a modem (`cellpath modems show 1`, later `-m/--modem`): its index in
/// discovery order, its IMEI, its SIM's ICCID, or one of its control ports.
package enum ModemSelector: Sendable, Equatable {
    case index(Int)
    case imei(String)
    case iccid(String)
    case port(String)

    /// Reads a selector: up to 3 digits are an index, 14 to 16 digits an IMEI, 18 to 22 digits
    /// (an ICCID may end in F) an ICCID; anything else names a control port (`cdc-wdm0`,
    /// `/dev/wwan0mbim0`).
    package init(_ text: String, command: [String]) throws(UsageError) {
        let digits = text.uppercased().hasSuffix("F") ? String(text.dropLast()) : text
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            let name = text.split(separator: "/").last.map(String.init) ?? text
            guard !name.isEmpty, !text.hasSuffix("/") else {
                throw UsageError(
                    "invalid modem '\(text)': expected an index, an IMEI, an ICCID or a control port", command: command)
            }
            self = .port(name)
            return
        }
        switch digits.count {
        case 1 ... 3 where digits == text: self = .index(Int(text)!)
        case 14 ... 16 where digits == text: self = .imei(text)
        case 18 ... 22: self = .iccid(text.uppercased())
        default:
            throw UsageError(
                "invalid modem '\(text)': expected an index (0, 1…), an IMEI (15 digits), an ICCID (18 to 22 digits) or a control port",
                command: command)
        }
    }

    /// Whether matching needs what the modems report (IMEI, ICCID).
    package var needsStatus: Bool {
        switch self {
        case .index, .port: false
        case .imei, .iccid: true
        }
    }

    package func matches(_ modem: DiscoveredModem, _ status: ModemStatus?) -> Bool {
        switch self {
        case .index(let index): modem.index == index
        case .port(let name): modem.ports.contains { $0.name == name }
        case .imei(let imei): status?.imei == imei
        case .iccid(let iccid): status?.sim?.iccid.map { Self.iccidDigits($0) == Self.iccidDigits(iccid) } ?? false
        }
    }

    /// Whether it names a modem cellpath cannot drive: by index, or by one of its ports or
    /// interfaces.
    package func matches(_ modem: UncontrolledModem) -> Bool {
        switch self {
        case .index(let index): modem.index == index
        case .port(let name): modem.ports.contains(name) || modem.interfaces.contains(name)
        case .imei, .iccid: false
        }
    }

    /// An ICCID without its padding F.
    private static func iccidDigits(_ iccid: String) -> String {
        let upper = iccid.uppercased()
        return upper.hasSuffix("F") ? String(upper.dropLast()) : upper
    }
}

/// Picks the one modem a command works on.
package enum ModemSelection {
    /// The outcome of a choice.
    package enum Choice: Sendable {
        /// The modem, and its report when choosing needed it.
        case chosen(DiscoveredModem, ModemReport?)
        /// No modem (or several) fits: the modems' list and a usage error (exit 64).
        case refused(CommandOutcome)
    }

    /// The modem `selector` names, or the only one when there is no selector. Reads the modems
    /// (with `read`) only when needed: to match an IMEI or ICCID, or to list them when the
    /// choice is refused. No modem at all is exit 69; so is a modem cellpath cannot drive
    /// (`uncontrolled`: unsupported, router mode) named by index or port, or found alone, with
    /// its reason.
    package static func choose(
        _ selector: ModemSelector?, among modems: [DiscoveredModem], roots: DeviceRoots,
        uncontrolled: [UncontrolledModem] = [], disclosure: Disclosure,
        read: @Sendable ([DiscoveredModem]) async -> [ModemReport]
    ) async throws -> Choice {
        if modems.isEmpty, selector == nil, let first = uncontrolled.first { throw ModemListing.cannotDrive(first) }
        if let selector, let named = uncontrolled.first(where: { selector.matches($0) }) {
            throw ModemListing.cannotDrive(named)
        }
        guard !modems.isEmpty else { throw ModemListing.noModem(roots) }
        let reports = selector?.needsStatus == true ? await read(modems) : nil
        let candidates = modems.filter { modem in
            guard let selector else { return true }
            return selector.matches(modem, reports?.first { $0.modem.index == modem.index }?.status)
        }
        if candidates.count == 1 {
            return .chosen(candidates[0], reports?.first { $0.modem.index == candidates[0].index })
        }
        let message: String
        if selector == nil {
            message = "\(modems.count) modems found: name one (index, IMEI, ICCID or control port)"
        } else if candidates.isEmpty {
            message = "no modem matches '\(selector!.text)'"
        } else {
            message = "\(candidates.count) modems match '\(selector!.text)'"
        }
        let listed: [ModemReport]
        if let reports { listed = reports } else { listed = await read(modems) }
        return .refused(
            CommandOutcome(
                ModemListing.list(listed, disclosure, roots: roots, uncontrolled: uncontrolled),
                failure: CommandFailure(CellpathError(.usage, message, hint: "the modems are listed above"))))
    }
}

extension ModemSelector {
    /// The selector as the user wrote it (an ICCID in upper case).
    var text: String {
        switch self {
        case .index(let index): String(index)
        case .imei(let text), .iccid(let text), .port(let text): text
        }
    }
}

extension ModemSelector {
    /// The modem `name` (`-m`) names, if any.
    package static func named(_ name: String?, command: [String]) throws(UsageError) -> ModemSelector? {
        try name.map { text throws(UsageError) in try ModemSelector(text, command: command) }
    }
}

extension ModemsShowCommand {
    /// The modem named on the command line (as the argument or with -m), if any.
    package static func selector(_ options: Options, command: [String]) throws(UsageError) -> ModemSelector? {
        if let argument = options.modem, let option = options.modemOption, argument != option {
            throw UsageError("two modems named: '\(argument)' and '-m \(option)'", command: command)
        }
        return try ModemSelector.named(options.modem ?? options.modemOption, command: command)
    }
}

extension ModemOption {
    /// The wait that `--wait` gives.
    package static func lockWait(_ seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
