import CellpathCore
import HTTPServer
import Workflow

/// The parameters of a dev-server request: a JSON object body or a form body, then the query.
/// Values must be strings without control characters.
struct RequestParameters: Sendable {
    private var values: [String: JSONValue] = [:]

    /// Reads `request`'s body by its content type (JSON: `application/json`, `application/*+json`
    /// or none; a form only when `allowsForm`) and its query; throws a 400 answer for a body
    /// that is not what its type says and 415 for another type.
    init(_ request: HTTPRequest, allowsForm: Bool) throws(ErrorAnswer) {
        for item in request.queryItems where values[item.name] == nil {
            values[item.name] = item.value.map(JSONValue.string) ?? .null
        }
        guard !request.body.isEmpty else { return }
        // The media type without its parameters: `text/plain; x=json` is no JSON.
        let mediaType = String(
            (request.headers["Content-Type"] ?? "").lowercased().prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }
        )
        // `curl -d '{…}'` sends JSON as a form: say so rather than read it as one.
        let looksLikeJSON = request.body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "{")
        let jsonHint = "the body looks like JSON: send it with Content-Type: application/json"
        if mediaType == "application/x-www-form-urlencoded" && allowsForm {
            if looksLikeJSON { throw ErrorAnswer(400, jsonHint) }
            guard let fields = Self.formFields(request.body) else {
                throw ErrorAnswer(400, "the form body is not valid")
            }
            for (name, value) in fields { values[name] = .string(value) }
        } else if mediaType.isEmpty || mediaType == "application/json"
            || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
        {
            guard case .object(let members)? = JSONValue.parse(request.body) else {
                throw ErrorAnswer(400, "the body is not a JSON object")
            }
            for (name, value) in members { values[name] = value }
        } else if looksLikeJSON {
            throw ErrorAnswer(415, jsonHint)
        } else {
            throw ErrorAnswer(
                415,
                allowsForm
                    ? "send application/json or application/x-www-form-urlencoded"
                    : "send application/json (form bodies: serve --allow-form-bodies)")
        }
    }

    /// The string parameter `name`; 400 `<name> parameter is required` when absent or empty.
    func required(_ name: String) throws(ErrorAnswer) -> String {
        guard let value = try optional(name) else { throw ErrorAnswer(400, "\(name) parameter is required") }
        return value
    }

    /// The string parameter `name`, or nil when absent or empty; 400 when it is not a string
    /// or holds control characters.
    func optional(_ name: String) throws(ErrorAnswer) -> String? {
        switch values[name] {
        case nil, .null?: return nil
        case .string(let text)?:
            guard !text.isEmpty else { return nil }
            guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }), text.utf8.count <= 2048
            else {
                throw ErrorAnswer(400, "\(name) parameter is not valid")
            }
            return text
        default: throw ErrorAnswer(400, "\(name) parameter must be a string")
        }
    }

    /// `a=b&c=d` with `+` and `%XX` decoded; nil when an escape or the UTF-8 is broken.
    static func formFields(_ body: [UInt8]) -> [(String, String)]? {
        var fields: [(String, String)] = []
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecoded(parts[0]), let value = percentDecoded(parts.count > 1 ? parts[1] : [])
            else { return nil }
            fields.append((name, value))
        }
        return fields
    }

    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                // Two hex digits exactly: `UInt8(_:radix:)` alone would take a sign ("%+f", "%-0").
                guard index + 2 < bytes.endIndex, let high = bytes[index + 1].hexDigitValue,
                    let low = bytes[index + 2].hexDigitValue
                else { return nil }
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(validating: out, as: UTF8.self)
    }
}

/// An answer that ends a request early: status and `{"error_message": …}`.
struct ErrorAnswer: Error, Sendable {
    var status: Int
    var message: String
    var headers: HTTPHeaders = [:]
    /// An error answer of the tru.ID API, sent on as it came instead of `message`.
    var passThrough: UpstreamAnswer?

    init(_ status: Int, _ message: String, headers: HTTPHeaders = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    var response: HTTPResponse {
        if let passThrough {
            var headers = HTTPHeaders(passThrough.headers.map { (name: $0.name, value: $0.value) })
            if headers["Content-Type"] == nil { headers.set("Content-Type", "application/json") }
            return HTTPResponse(status: passThrough.status, headers: headers, body: passThrough.body)
        }
        var response = HTTPResponse(
            status: status, contentType: "application/json",
            body: JSONValue.object([("error_message", .string(message))]).serialized, headers: headers)
        response.headers.set("Content-Type", "application/json")
        return response
    }
}
