import CellpathCore
import Glibc
import HTTPServer

@testable import Server

/// `serve`'s request parsing: the parameters of a body (JSON or urlencoded, by Content-Type)
/// and query (`RequestParameters`), the route names of logs and metrics, and the parts of a
/// webhook's signature check that read text (`WebhookVerifier.parameters`, `httpDate`).
/// Input: a control byte (Content-Type), a path line, a `Signature` header line, a `Date`
/// line, then the body.
///
/// Invariants: a form body decodes exactly as a strict reference decoder (`%XX` with two hex
/// digits, `+` a space, UTF-8) decodes it, and is refused when that refuses it; a parameter
/// handed out has no control character and at most 2048 bytes; a route name is a known path,
/// the check-id template or "other" (no id or personal data reaches a metric label); every
/// signature parameter read is a `name="value"` pair of the header; and an accepted Date is
/// the instant its fields name, which gmtime gives back (no "29 Feb 2027").
enum ServeRequestTarget: FuzzTarget {
    static let name = "serve-request"

    static func run(_ input: [UInt8]) {
        var input = FuzzInput(input)
        let contentType = input.pick([
            "application/json", "application/x-www-form-urlencoded", "", "text/plain", "application/problem+json"
        ])
        let path = input.line()
        let signature = input.line()
        let date = input.line()
        let body = input.remaining()

        let route = DevServerRoutes.routeName(path)
        require(
            DevServerRoutes.knownPaths.contains(route) || route == "/subscriber-check/{check_id}" || route == "other",
            "route name \(shown(route)) for \(shown(path))")

        var headers = HTTPHeaders()
        if !contentType.isEmpty { headers.set("Content-Type", contentType) }
        let request = HTTPRequest(
            method: "POST", path: "/check", queryItems: [HTTPQueryItem(name: "phone_number", value: path)],
            headers: headers, body: body)
        if contentType == "application/x-www-form-urlencoded", !body.isEmpty {
            let fields = RequestParameters.formFields(body)
            let reference = referenceFormFields(body)
            require(
                fields.map { $0.map { "\($0)=\($1)" } } == reference.map { $0.map { "\($0)=\($1)" } },
                "form body \(shown(String(decoding: body, as: UTF8.self))) decodes as \(fields.map { "\($0)" } ?? "an error"), the reference as \(reference.map { "\($0)" } ?? "an error")"
            )
        }
        if let parameters = try? RequestParameters(request, allowsForm: true) {
            var names = ["phone_number"]
            if let json = JSONValue.parse(body), case .object(let members) = json { names += members.map(\.0) }
            if let fields = RequestParameters.formFields(body) { names += fields.map(\.0) }
            for name in names {
                guard let value = try? parameters.optional(name) else { continue }
                require(
                    !value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } && value.utf8.count <= 2048,
                    "parameter \(shown(name)) handed out as \(shown(value))")
            }
        }

        // Spaces around a name and before a value's quote are skipped.
        let unspaced = signature.filter { $0 != " " }
        for (name, value) in WebhookVerifier.parameters(signature) {
            require(
                unspaced.contains("\(name)=\"\(value)\"".filter { $0 != " " }),
                "signature parameter \(shown(name)) = \(shown(value)) is not in \(shown(signature))")
        }
        if let seconds = WebhookVerifier.httpDate(date) {
            var time = time_t(seconds)
            var fields = tm()
            gmtime_r(&time, &fields)
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            let parts = date.split(separator: " ")
            let clock = parts[4].split(separator: ":").compactMap { Int32($0) }
            // A leap second (":60") is the next minute's first second for gmtime.
            require(
                clock.last == 60
                    || Int32(parts[1]) == fields.tm_mday && String(parts[2]) == months[Int(fields.tm_mon)]
                        && Int32(parts[3]) == fields.tm_year + 1900
                        && clock == [fields.tm_hour, fields.tm_min, fields.tm_sec],
                "Date \(shown(date)) was read as \(seconds), which is not the instant it names")
        }
    }

    /// `a=b&c=d` decoded strictly: nil on a `%` without two hex digits or on invalid UTF-8.
    static func referenceFormFields(_ body: [UInt8]) -> [(String, String)]? {
        func decode(_ part: ArraySlice<UInt8>) -> String? {
            var out: [UInt8] = []
            var rest = part
            while let byte = rest.popFirst() {
                switch byte {
                case UInt8(ascii: "+"): out.append(UInt8(ascii: " "))
                case UInt8(ascii: "%"):
                    guard rest.count >= 2, let high = hex(rest[rest.startIndex]),
                        let low = hex(rest[rest.startIndex + 1])
                    else { return nil }
                    out.append(high << 4 | low)
                    rest = rest.dropFirst(2)
                default: out.append(byte)
                }
            }
            return String(validating: out, as: UTF8.self)
        }
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A") ... UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var fields: [(String, String)] = []
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let eq = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            guard let name = decode(pair[..<eq]), let value = decode(eq < pair.endIndex ? pair[(eq + 1)...] : []) else {
                return nil
            }
            fields.append((name, value))
        }
        return fields
    }
}
