/// A response the server sends: status, header fields (names may repeat) and body, and
/// when to send it.
public struct HTTPResponse: Sendable, Equatable {
    /// When the server delivers a response.
    public enum Delivery: Sendable, Equatable {
        /// As soon as the handler returns.
        case immediately
        /// After the given delay, without holding up other connections; cut short by `stop()`.
        case after(Duration)
        /// Never: the connection stays open without an answer until the server stops, then
        /// it is closed.
        case never
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var delivery: Delivery

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = [], delivery: Delivery = .immediately) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delivery = delivery
    }

    /// A response with a UTF-8 body and the given content type.
    public init(status: Int, contentType: String, body: String, headers: HTTPHeaders = [:]) {
        var all = headers
        all.set("Content-Type", contentType)
        self.init(status: status, headers: all, body: Array(body.utf8))
    }

    /// A response that is never sent (see `Delivery.never`).
    public static var noAnswer: HTTPResponse { HTTPResponse(status: 0, delivery: .never) }

    /// A redirect to `location` with the given 3xx status.
    public static func redirect(_ location: String, status: Int = 302, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var all = headers
        all.set("Location", location)
        return HTTPResponse(status: status, headers: all)
    }

    /// The body decoded as UTF-8 (invalid bytes replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
