import CellpathCore
import Glibc
import Simulator
import Testing
import TestSupport

/// One test world seen from the device, driven through the built `cellpath` binary:
/// `cellpath sim …` for the world, `cellpath sim exec -- cellpath fetch …` on the device, and
/// curl / tcpdump / mbimcli / qmicli inside the device namespace.
struct SimulatedDevice {
    let prefix: String
    var ue: String { prefix + "ue" }
    static let path = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]

    /// Brings a world up with `scenario`, runs `body` on it and always takes it down.
    static func with<T>(_ scenario: Scenario? = nil, connect: Bool = true, _ body: (SimulatedDevice) throws -> T) throws -> T {
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

    /// curl in the device namespace, trusting the world's CA; over Wi-Fi unless told otherwise.
    func curl(_ arguments: [String]) throws -> ProcessResult {
        let ca = try #require(try environment()["CELLPATH_CA_FILE"])
        return try run(["curl", "-sS", "--max-time", "10", "--cacert", ca] + arguments)
    }

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
        let answer = try curlJSON(["-u", "\(id):\(secret)", "-d", "grant_type=client_credentials&scope=\(scope)",
                                   "https://api.truid.test/oauth2/v1/token"])
        return try #require(answer["access_token"]?.string)
    }

    /// Creates a check over Wi-Fi (`product` e.g. `subscriber_check/v0.2`) and returns its id and check_url.
    func createCheck(_ product: String, token: String, number: String = "+447940448591") throws -> (id: String, url: String) {
        let check = try curlJSON(["-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                                  "-d", #"{"phone_number":"\#(number)"}"#, "https://api.truid.test/\(product)/checks"])
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
    func capture<T>(on interfaces: [String], _ body: () throws -> T) throws -> (T, [String: [String]]) {
        var captures: [(String, String, BackgroundProcess)] = []
        defer { for (_, file, process) in captures { process.stop(); unlink(file) } }
        for name in interfaces {
            let file = "/tmp/\(prefix)\(name)-\(getpid()).pcap"
            unlink(file)
            let process = try BackgroundProcess(["ip", "netns", "exec", ue, "tcpdump", "-i", name, "-n", "--immediate-mode", "-U", "-w", file])
            captures.append((name, file, process))
            // tcpdump writes the pcap file header once the capture is open.
            var waited = 0
            while fileSize(file) < 24 && waited < 5000 { usleep(20_000); waited += 20 }
            #expect(fileSize(file) >= 24, "tcpdump on \(name) did not start")
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

    /// Drops TCP packets of connections from the device's Wi-Fi address (192.0.2.23) whose SYN
    /// is not in the capture: the closing packets (close_notify, FIN, RST) of the backend leg's
    /// curl, which ran just before. Everything a leak could be stays: any packet that carries a
    /// bearer address (100.64.x.x), any new connection (its SYN is captured), UDP (DNS), ICMP.
    static func withoutEarlierWiFiConnections(_ lines: [String]) -> [String] {
        let wifi = "192.0.2.23."
        /// `TIME IP A > B: …` → (A, B).
        func endpoints(_ line: String) -> (String, String)? {
            let words = line.split(separator: " ")
            guard let ip = words.firstIndex(of: "IP"), ip + 3 < words.count, words[ip + 2] == ">",
                  words[ip + 3].hasSuffix(":") else { return nil }
            return (String(words[ip + 1]), String(words[ip + 3].dropLast()))
        }
        func connection(_ a: String, _ b: String) -> String { a < b ? "\(a) \(b)" : "\(b) \(a)" }
        var opened = Set<String>()
        for line in lines where line.contains("Flags [S") {
            if let (a, b) = endpoints(line) { opened.insert(connection(a, b)) }
        }
        return lines.filter { line in
            guard line.contains(" Flags ["), let (a, b) = endpoints(line),
                  a.hasPrefix(wifi) || b.hasPrefix(wifi), !line.contains("100.64.") else { return true }
            return opened.contains(connection(a, b))
        }
    }

    private func fileSize(_ file: String) -> Int {
        var info = stat()
        return stat(file, &info) == 0 ? Int(info.st_size) : 0
    }
}

/// A child left running while a test works (tcpdump, a delayed command); spawned with default
/// signal dispositions and an empty signal mask, so that SIGINT reaches it.
final class BackgroundProcess {
    let pid: pid_t
    private var reaped = false

    init(_ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), defaults = sigset_t()
        sigemptyset(&empty)
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = SimulatedDevice.path.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, env)
        guard rc == 0 else { throw CellpathError(.unavailable, "cannot start \(arguments[0]): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    /// Waits up to `timeoutMs` for the child to exit; true when it did.
    func wait(timeoutMs: Int) -> Bool {
        if reaped { return true }
        var status: Int32 = 0
        for _ in 0..<(max(timeoutMs, 0) / 20 + 1) {
            if waitpid(pid, &status, WNOHANG) == pid { reaped = true; return true }
            usleep(20_000)
        }
        return false
    }

    /// SIGINT (tcpdump flushes and closes its file), then SIGKILL after 3 s; reaps the child.
    func stop() {
        guard !reaped else { return }
        kill(pid, SIGINT)
        if wait(timeoutMs: 3000) { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        reaped = true
    }

    deinit { stop() }
}

extension JSONValue {
    /// The failure reason of a `cellpath fetch --json` report, if it failed.
    var failureReason: String? { self["failure"]?["reason"]?.string }
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
