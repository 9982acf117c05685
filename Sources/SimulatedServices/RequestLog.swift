import CellpathCore
import HTTPServer

/// One JSON line per request served by a simulated service (what `sim log` prints).
public enum RequestLog {
    /// Query parameters whose values are secrets and are never logged.
    public static let secretParameters: Set<String> = [
        "code", "assertion", "access_token", "token", "client_secret", "session", "state", "nonce",
        "code_challenge", "login_hint"
    ]

    /// The log line: time, namespace, source address, method, path (query included, secret
    /// values replaced by `[redacted]`), status (null when the request was never answered), and
    /// the networks the tru.ID SDKs' `x-tru-ops` header named, when the request carried one.
    public static func line(time: Double, namespace: String, request: HTTPRequest, status: Int?) -> String {
        var path = request.path
        if !request.queryItems.isEmpty {
            path +=
                "?"
                + request.queryItems.map { item -> String in
                    guard let value = item.value else { return WebEncoding.percentEncode(item.name) }
                    let shown = secretParameters.contains(item.name) ? "[redacted]" : WebEncoding.percentEncode(value)
                    return WebEncoding.percentEncode(item.name) + "=" + shown
                }.joined(separator: "&")
        }
        var fields: [(String, JSONValue)] = [
            ("time", .string(SimulatorClock.preciseTimestamp(time))),
            ("namespace", .string(namespace)),
            ("source", .string(request.remoteAddress)),
            ("method", .string(request.method)),
            ("path", .string(path)),
            ("status", status.map { .int($0) } ?? .null)
        ]
        if let operators = request.headers["x-tru-ops"] { fields.append(("x_tru_ops", .string(operators))) }
        return JSONValue.object(fields).serialized
    }
}
