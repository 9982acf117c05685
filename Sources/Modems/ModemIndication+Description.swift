import CellpathCore

/// Indications as the debug log shows them: `registration home on 001-01 (cellpath sim), lte`,
/// `bearer disconnected (regular-deactivation)`. Operator names and ids are network data, not
/// personal data.
extension ModemIndication: CustomStringConvertible {
    public var description: String {
        switch self {
        case .registration(let registration):
            var text = "registration \(registration.state.rawValue)"
            if let network = registration.servingOperator, network.id != nil || network.name != nil {
                text += " on " + [network.id, network.name.map { "(\($0))" }].compactMap { $0 }.joined(separator: " ")
            }
            if let technology = registration.accessTechnology { text += ", \(technology.rawValue)" }
            if let error = registration.networkError { text += " (\(error))" }
            return text
        case .packetService(let state):
            return "packet service \(state.rawValue)"
        case .bearer(let state, let reason):
            return "bearer \(state.rawValue)" + (reason.map { " (\($0))" } ?? "")
        }
    }
}
