import CellpathCore
import FoundationEssentials
import Glibc
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// One test world seen from the device, driven through the built `cellpath` binary:
/// `cellpath sim …` for the world, `cellpath sim exec -- cellpath fetch …` on the device, and
/// curl / tcpdump / mbimcli / qmicli inside the device namespace.
struct SimulatedDevice {
    let prefix: String
    var ue: String { prefix + "ue" }
    static let path = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]

    /// Brings a world up with `scenario`, runs `body` on it and always takes it down.
    static func with<T>(
        _ scenario: Scenario? = nil, connect: Bool = true, _ body: (SimulatedDevice) throws -> T
    ) throws -> T {
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let device = SimulatedDevice(prefix: prefix)
            if connect { try device.bearer(connect: true) }
            return try body(device)
        }
    }

    /// `cellpath sim ARGS… --prefix P`.
    @discardableResult
    func sim(_ arguments: String...) throws -> ProcessResult {
        let result = try CellpathBinary.run(["sim"] + arguments + ["--prefix", prefix])
        #expect(result.status == 0, "cellpath sim \(arguments): \(result.stderr)")
        return result
    }

    /// `cellpath sim bearer connect|disconnect`.
    func bearer(connect: Bool) throws {
        try sim("bearer", connect ? "connect" : "disconnect")
    }

    /// The variables of `cellpath sim env`.
    func environment() throws -> [String: String] {
        var env: [String: String] = [:]
        for line in try sim("env").stdout.split(separator: "\n") where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            guard let eq = assignment.firstIndex(of: "=") else { continue }
            env[String(assignment[..<eq])] = assignment[assignment.index(after: eq)...].trimmingCharacters(in: "'")
        }
        return env
    }

    /// The request log (`cellpath sim log`), one object per line.
    func requestLog() throws -> [JSONValue] {
        try sim("log").stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }

    /// `cellpath sim status --json`.
    func status() throws -> JSONValue {
        try JSONValue.parse(CellpathBinary.run(["sim", "status", "--prefix", prefix, "--json"]).stdout)
    }

    /// Runs `cellpath ARGS…` on the device (`cellpath sim exec`), returns exit status and output.
    func cellpath(_ arguments: [String]) throws -> ProcessResult {
        try CellpathBinary.run(["sim", "exec", "--prefix", prefix, "--", CellpathBinary.path] + arguments)
    }

    /// `cellpath fetch --interface wwan0 --dns 100.64.0.53 ARGS… --json` on the device.
    func fetch(_ arguments: [String]) throws -> (status: Int32, json: JSONValue, stderr: String) {
        let result = try cellpath(["fetch", "--interface", "wwan0", "--dns", "100.64.0.53"] + arguments + ["--json"])
        let json = try JSONValue.parse(result.stdout)
        return (result.status, json, result.stderr)
    }

    /// Runs a program inside the device namespace with the world's environment.
    func run(_ arguments: [String]) throws -> ProcessResult {
        var env = Self.path
        for (name, value) in try environment() { env[name] = value }
        return try ProcessRunner.run(["ip", "netns", "exec", ue] + arguments, environment: env)
    }

    /// The device namespace's source rules, addresses of the bearer's networks and routes
    /// through a modem interface (both families): what a bearer cellpath configured leaves.
    func bearerLeftovers() throws -> [String] {
        var left: [String] = []
        for family in ["-4", "-6"] {
            let rules = try run(["ip", family, "rule"]).stdout.split(separator: "\n")
            // The kernel's own: local (0), main (32766) and default (32767).
            left += rules.filter { !($0.hasPrefix("0:") || $0.hasPrefix("32766:") || $0.hasPrefix("32767:")) }
                .map { "rule \($0)" }
            let addresses = try run(["ip", family, "-o", "addr"]).stdout.split(separator: "\n")
            left += addresses.filter { $0.contains("wwan") && !$0.contains(" fe80:") }.map { "address \($0)" }
            let routes = try run(["ip", family, "route", "show", "table", "all"]).stdout.split(separator: "\n")
            left += routes.filter { $0.contains("wwan") && !$0.contains("fe80::") && !$0.hasPrefix("multicast") }
                .map { "route \($0)" }
        }
        return left
    }

    /// curl in the device namespace, trusting the world's CA; over Wi-Fi unless told otherwise.
    func curl(_ arguments: [String]) throws -> ProcessResult { try Curl.onDevice(of: prefix, arguments) }

    /// curl that must succeed; its stdout parsed as JSON.
    func curlJSON(_ arguments: [String]) throws -> JSONValue {
        let result = try curl(arguments)
        #expect(result.status == 0, "curl \(arguments): \(result.stderr)")
        return try JSONValue.parse(result.stdout)
    }

    /// An access token from the fake API for `scope`, fetched over Wi-Fi (the backend leg).
    func token(_ scope: String) throws -> String {
        let env = try environment()
        let id = try #require(env["CELLPATH_CLIENT_ID"]), secret = try #require(env["CELLPATH_CLIENT_SECRET"])
        let answer = try curlJSON([
            "-u", "\(id):\(secret)", "-d", "grant_type=client_credentials&scope=\(scope)",
            "https://api.truid.test/oauth2/v1/token"
        ])
        return try #require(answer["access_token"]?.string)
    }

    /// Creates a check over Wi-Fi (`product` e.g. `subscriber_check/v0.2`) and returns its id and check_url.
    func createCheck(
        _ product: String, token: String, number: String = "+447940448591"
    ) throws -> (id: String, url: String) {
        let check = try curlJSON([
            "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
            "-d", #"{"phone_number":"\#(number)"}"#, "https://api.truid.test/\(product)/checks"
        ])
        #expect(check["status"]?.string == "ACCEPTED")
        return (try #require(check["check_id"]?.string), try #require(check["_links"]?["check_url"]?["href"]?.string))
    }

    /// A SubscriberCheck v0.2 check_url, created with the world's credentials.
    func subscriberCheckURL() throws -> (id: String, url: String) {
        try createCheck("subscriber_check/v0.2", token: token("subscriber_check"))
    }

    /// Runs `body` while tcpdump captures on `interfaces` in the device namespace; returns what
    /// `body` returned and the captured packets per interface (one `tcpdump -r` line each),
    /// without the tail of Wi-Fi connections that the test's backend leg opened before the
    /// capture (see `withoutEarlierWiFiConnections`).
    /// `fetch --modem 0` of a slow API call (3 s) while the network drops modem 0's bearer after
    /// a second, with a capture on wlan0: the fetch must fail closed at once (69, the path went
    /// away: interfaceDown or addressGone, whichever the engine sees first, not the hop timeout)
    /// with nothing on Wi-Fi; `body` then checks what is left, on the world still up.
    static func withBearerDroppedDuringAFetch(
        _ scenario: Scenario, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (SimulatedDevice, ProcessResult) throws -> Void
    ) throws {
        var scenario = scenario
        scenario.modems[0].faults.dropBearerAfterSeconds = 1
        scenario.api.slowMs = 3000
        try with(scenario, connect: false) { device in
            let (fetch, packets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath([
                    "fetch", "--modem", "0", "https://api.truid.test/coverage/v0.1/device_ip", "--json"
                ])
            }
            #expect(fetch.status == 69, "\(fetch.stderr)", sourceLocation: sourceLocation)
            #expect(
                ["interfaceDown", "addressGone"].contains(
                    try JSONValue.parse(fetch.stdout)["error"]?["reason"]?.string ?? ""),
                "\(fetch.stdout)", sourceLocation: sourceLocation)
            #expect(
                packets["wlan0"] == [], "packets on wlan0: \(packets["wlan0"] ?? [])", sourceLocation: sourceLocation)
            try body(device, fetch)
        }
    }

    /// `filter`: a tcpdump filter expression (e.g. `["net", "100.64.0.0/16"]`); none: every packet.
    func capture<T>(
        on interfaces: [String], filter: [String] = [], _ body: () throws -> T
    ) throws -> (T, [String: [String]]) {
        var captures: [(String, String, BackgroundProcess)] = []
        defer { for (_, file, process) in captures { process.stop(); unlink(file) } }
        for name in interfaces {
            let file = "/tmp/\(prefix)\(name)-\(getpid()).pcap"
            unlink(file)
            let process = try BackgroundProcess(
                ["ip", "netns", "exec", ue, "tcpdump", "-i", name, "-n", "--immediate-mode", "-U", "-w", file] + filter,
                environment: Self.path)
            captures.append((name, file, process))
            // tcpdump writes the pcap file header once the capture is open.
            let started = Poll.until(timeout: .seconds(5)) { fileSize(file) >= 24 }
            #expect(started, "tcpdump on \(name) did not start")
        }
        usleep(200_000)
        let value = try body()
        usleep(300_000)  // let late packets (retransmissions, FINs) reach the capture
        var packets: [String: [String]] = [:]
        for (name, file, process) in captures {
            process.stop()
            let read = try ProcessRunner.run(["tcpdump", "-r", file, "-n"], environment: Self.path)
            #expect(read.status == 0, "tcpdump -r: \(read.stderr)")
            packets[name] = Self.withoutEarlierWiFiConnections(read.stdout.split(separator: "\n").map(String.init))
        }
        return (value, packets)
    }

    /// Drops TCP packets of connections from the device's Wi-Fi addresses (192.0.2.23,
    /// 2001:db8:2::23) whose SYN is not in the capture: the closing packets (close_notify, FIN,
    /// RST) of the backend leg's curl, which ran just before. Everything a leak could be stays:
    /// any packet that carries a bearer address (100.64.x.x, 2001:db8:64:…), any new connection
    /// (its SYN is captured), UDP (DNS), ICMP and ICMPv6, of either family.
    static func withoutEarlierWiFiConnections(_ lines: [String]) -> [String] {
        let wifi = ["192.0.2.23.", "2001:db8:2::23."], bearer = ["100.64.", "2001:db8:64:"]
        /// `TIME IP A > B: …` or `TIME IP6 A > B: …` → (A, B).
        func endpoints(_ line: String) -> (String, String)? {
            let words = line.split(separator: " ")
            guard let ip = words.firstIndex(where: { $0 == "IP" || $0 == "IP6" }), ip + 3 < words.count,
                words[ip + 2] == ">",
                words[ip + 3].hasSuffix(":")
            else { return nil }
            return (String(words[ip + 1]), String(words[ip + 3].dropLast()))
        }
        func connection(_ a: String, _ b: String) -> String { a < b ? "\(a) \(b)" : "\(b) \(a)" }
        func isWiFi(_ endpoint: String) -> Bool { wifi.contains { endpoint.hasPrefix($0) } }
        var opened = Set<String>()
        for line in lines where line.contains("Flags [S") {
            if let (a, b) = endpoints(line) { opened.insert(connection(a, b)) }
        }
        return lines.filter { line in
            guard line.contains(" Flags ["), let (a, b) = endpoints(line),
                isWiFi(a) || isWiFi(b), !bearer.contains(where: line.contains)
            else { return true }
            return opened.contains(connection(a, b))
        }
    }

    private func fileSize(_ file: String) -> Int {
        var info = stat()
        return stat(file, &info) == 0 ? Int(info.st_size) : 0
    }
}

extension JSONValue {
    /// The hops of a `cellpath fetch --json` report.
    var hops: [JSONValue] { self["hops"]?.array ?? [] }
}

extension Substring {
    func trimmingCharacters(in character: Character) -> String {
        var text = self
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return String(text)
    }
}
