// Test helper: runs one fetch through `--interface NAME [--ipv4 ADDR] --dns ADDR[,ADDR]` as `cellpath fetch`
// does (the workflow's check_url step over the HTTP engine) and prints the report as JSON (stdout).
import CellpathCore
import CellularHTTP
import FoundationEssentials
import Glibc
import SystemSupport
import Workflow

var args = Array(CommandLine.arguments.dropFirst())
var interface = "wwan0", dns: [String] = [], url = "", har: String?, ipv4: String?, cancelAfterMs: Int?,
    operatorID: String?
var request = FetchRequest(url: "")
var disclosure = Disclosure.redacted
while !args.isEmpty {
    let a = args.removeFirst()
    func value() -> String { args.isEmpty ? "" : args.removeFirst() }
    switch a {
    case "--interface": interface = value()
    case "--ipv4": ipv4 = value()
    case "--dns": dns = value().split(separator: ",").map(String.init)
    case "--max-hops": request.maxHops = Int(value()) ?? 10
    case "--hop-timeout": request.hopTimeout = .milliseconds(Int((Double(value()) ?? 5) * 1000))
    case "--timeout": request.totalTimeout = .milliseconds(Int((Double(value()) ?? 30) * 1000))
    case "--ip-type": request.ipType = IPType(rawValue: value()) ?? .any
    case "--stop-at": request.stopAtPrefix = value()
    case "--strict": request.strict = true
    case "--cacert": request.caFile = value()
    case "--method": request.method = value()
    case "--data": request.body = Array(value().utf8)
    case "--header":
        let h = value()
        let name = String(h.prefix { $0 != ":" })
        request.headers.append(HTTPHeader(name, String(h.dropFirst(name.count + 1).drop { $0 == " " })))
    case "--har": har = value()
    case "--full": disclosure = .full
    case "--cancel-after": cancelAfterMs = Int(value())
    case "--operator": operatorID = value()
    case "--late-header":
        // NAME:VALUE@MS: the first request's header, given MS ms after the connection is up.
        let spec = value(), name = String(spec.prefix { $0 != ":" })
        let rest = spec.dropFirst(name.count + 1), headerValue = String(rest.prefix { $0 != "@" })
        let delay = Int(rest.dropFirst(headerValue.count + 1)) ?? 0
        request.lateFirstRequestHeaders = {
            usleep(useconds_t(delay * 1000))
            return [HTTPHeader(name, headerValue)]
        }
    default: url = a
    }
}
request.url = url

let report: CheckURLReport
do throws(CellpathError) {
    var path: CellularPath
    if let ipv4 {
        path = CellularPath(interfaceName: interface, ipv4Address: ipv4, dnsServers: dns)
    } else {
        path = try await InterfacePathProvider(interface: interface, dnsServers: dns, operatorID: operatorID)
            .cellularPath()
    }
    let opener = CheckURLOpener(client: CellularHTTPClient(path: path)), fixed = request
    let task = Task { await opener.open(fixed, sendOperatorHeader: operatorID != nil) }
    if let cancelAfterMs {
        Task {
            try await Task.sleep(for: .milliseconds(cancelAfterMs)); task.cancel()
        }
    }
    report = await task.value
} catch {
    report = CheckURLReport(
        trace: FetchReport(
            interfaceName: interface, localAddresses: [], dnsServers: dns, hops: [], result: nil,
            failure: FetchFailure(.noAddress, error.message), totalMs: 0),
        callback: nil)
}
if let har {
    let bytes = HARWriter.har(report.trace, disclosure: disclosure)
    try FileSystem.write(bytes, to: har, mode: 0o600)
}
let encoder = JSONEncoder()
encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
let out = ((try? Array(encoder.encode(report.redacted(disclosure)))) ?? []) + [10]
_ = out.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
for line in report.humanLines(disclosure) { _ = (line + "\n").withCString { write(2, $0, strlen($0)) } }
if let failure = report.trace.failure {
    _ = "error: couldn't fetch: \(failure.message)\n".withCString { write(2, $0, strlen($0)) }
}
exit(report.trace.failure == nil ? 0 : 1)
