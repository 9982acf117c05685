import CellpathCore
import CellularHTTP
import Synchronization
import Testing

@testable import CellpathCLI
@testable import CommandLineKit

/// `fetch -v`: the debug line of each hop's DNS says where its answers came from.
struct FetchLogTests {
    final class Lines: LogSink, Sendable {
        private let stored = Mutex<[String]>([])
        var lines: [String] { stored.withLock { $0 } }
        func write(line: String) { stored.withLock { $0.append(line) } }
    }

    static func hop(_ index: Int, dnsMs: Double, source: DNSSource, ttl: Int?) -> HopTrace {
        HopTrace(
            index: index, method: "GET", url: "https://api.truid.test/\(index)", status: 200, location: nil,
            remoteAddress: "203.0.113.10", remotePort: 443, localAddress: "", localPort: 0, connectionReused: false,
            tlsVersion: nil, httpVersion: "HTTP/1.1",
            timings: HopTimings(dnsMs: dnsMs, connectMs: nil, tlsMs: nil, firstByteMs: 1, totalMs: 2),
            dnsAnswers: ["203.0.113.10"], dnsSource: source, dnsTTL: ttl, responseHeaders: [], requestHeaders: [],
            bodyBytes: 0, headerBytes: 0, downgrade: false, startedAt: 0)
    }

    @Test func eachHopsDNSLineSaysWhereTheAnswersCameFrom() {
        let report = FetchReport(
            interfaceName: "wwan0", localAddresses: ["100.64.23.5"], dnsServers: ["100.64.0.53"],
            hops: [
                Self.hop(1, dnsMs: 81.5, source: .network, ttl: 60), Self.hop(2, dnsMs: 0, source: .chain, ttl: nil),
                Self.hop(3, dnsMs: 0, source: .bearerCache, ttl: 42)
            ],
            result: nil, failure: nil, totalMs: 90)
        let sink = Lines()
        FetchCommand.logDetails(report, interface: "wwan0", Logger(threshold: .debug, sink: sink))
        #expect(
            sink.lines.filter { $0.contains("DNS answers") } == [
                "debug: [hop 1] DNS answers 203.0.113.10 in 81.5 ms, asked through wwan0, TTL 60 s",
                "debug: [hop 2] DNS answers 203.0.113.10 from the chain's cache",
                "debug: [hop 3] DNS answers 203.0.113.10 from the bearer's DNS cache (TTL 42 s left)"
            ])
    }
}
