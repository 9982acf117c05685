import CellpathCore
import SystemSupport

/// Writes a fetch report as HAR 1.2 (one entry per hop), redacted per `Disclosure`.
public enum HARWriter {
    private struct Log: Encodable { var log: Body }
    private struct Body: Encodable {
        var version = "1.2"
        var creator: NameVersion
        var entries: [Entry]
    }
    private struct NameVersion: Encodable { var name: String; var version: String }
    private struct NameValue: Encodable { var name: String; var value: String }
    private struct Entry: Encodable {
        var startedDateTime: String
        var time: Double
        var request: Request
        var response: Response
        var cache: [String: String] = [:]
        var timings: Timings
        var serverIPAddress: String
        var connection: String
        var comment: String
    }
    private struct Request: Encodable {
        var method: String
        var url: String
        var httpVersion: String
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var queryString: [NameValue]
        var headersSize = -1
        var bodySize = -1
    }
    private struct Response: Encodable {
        var status: Int
        var statusText = ""
        var httpVersion: String
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var content: Content
        var redirectURL: String
        var headersSize: Int
        var bodySize: Int
    }
    private struct Content: Encodable { var size: Int; var mimeType: String; var text: String? }
    private struct Timings: Encodable {
        var blocked = -1.0
        var dns: Double
        var connect: Double
        var send = 0.0
        var wait: Double
        var receive: Double
        var ssl: Double
    }

    /// The HAR document for `report`, as UTF-8 JSON bytes.
    public static func har(_ report: FetchReport, disclosure: Disclosure) -> [UInt8] {
        let r = report.redacted(disclosure)
        let entries = r.hops.map { hop -> Entry in
            let isLast = hop.index == r.hops.count
            let t = hop.timings
            let connect = (t.connectMs ?? -1) >= 0 ? (t.connectMs ?? 0) + (t.tlsMs ?? 0) : -1
            let contentType = hop.responseHeaders.last { $0.name.lowercased() == "content-type" }?.value ?? ""
            let text = isLast ? r.result?.finalBody : nil
            let query = queryItems(hop.url)
            return Entry(
                startedDateTime: iso8601(hop.startedAt), time: t.totalMs,
                request: Request(
                    method: hop.method, url: hop.url, httpVersion: hop.httpVersion,
                    headers: hop.requestHeaders.map { NameValue(name: $0.name, value: $0.value) },
                    queryString: query),
                response: Response(
                    status: hop.status, httpVersion: hop.httpVersion,
                    headers: hop.responseHeaders.map { NameValue(name: $0.name, value: $0.value) },
                    content: Content(size: hop.bodyBytes, mimeType: contentType, text: text),
                    redirectURL: hop.location ?? "", headersSize: hop.headerBytes, bodySize: hop.bodyBytes),
                timings: Timings(
                    dns: t.dnsMs, connect: connect, wait: t.firstByteMs,
                    receive: max(0, t.totalMs - t.dnsMs - max(0, connect) - t.firstByteMs),
                    ssl: t.tlsMs ?? -1),
                serverIPAddress: hop.remoteAddress, connection: "\(hop.localAddress):\(hop.localPort)",
                comment:
                    "via \(r.interfaceName)\(hop.connectionReused ? ", reused connection" : "")\(hop.downgrade ? ", downgrade to plain http" : "")"
            )
        }
        let log = Log(
            log: Body(creator: NameVersion(name: "cellpath", version: CellpathVersion.current), entries: entries))
        return (try? JSONEncoding.encode(log, format: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? []
    }

    private static func queryItems(_ url: String) -> [NameValue] {
        guard let q = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return [] }
        return q.prefix { $0 != "#" }.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return NameValue(name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "")
        }
    }

    private static func iso8601(_ seconds: Double) -> String {
        WallClock.iso8601(seconds, milliseconds: true)
    }
}
