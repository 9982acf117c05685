/// A log or trace message whose personal-data parts are marked where they are written,
/// so that one `Disclosure` decides how the whole line is shown:
/// `"SIM \(imsi, as: .imsi) ready"`.
public struct LogMessage: Sendable, ExpressibleByStringInterpolation {
    enum Segment: Sendable {
        case text(String)
        case personal(String, PersonalDataKind)
    }

    var segments: [Segment] = []

    public init(stringLiteral value: String) {
        segments = [.text(value)]
    }

    public init(stringInterpolation: StringInterpolation) {
        segments = stringInterpolation.segments
    }

    /// The message with personal data shown or masked according to `disclosure`.
    public func rendered(_ disclosure: Disclosure) -> String {
        segments.map { segment in
            switch segment {
            case .text(let text): return text
            case .personal(let value, let kind): return disclosure.reveal(value, as: kind)
            }
        }.joined()
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var segments: [Segment] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) {
            segments.append(.text(literal))
        }

        public mutating func appendInterpolation<T>(_ value: T) {
            segments.append(.text(String(describing: value)))
        }

        /// Interpolates personal data or a secret, masked unless disclosure is `.full`.
        public mutating func appendInterpolation(_ value: String, as kind: PersonalDataKind) {
            segments.append(.personal(value, kind))
        }
    }
}
