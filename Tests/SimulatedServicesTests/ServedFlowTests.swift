import CShims
import CellpathCore
import FoundationEssentials
import Glibc
import HTTPServer
import SimulatedServices
import Simulator
import SimulatorScenario
import Synchronization
import SystemSupport
import TestSupport
import Testing

/// Collects log lines from server threads.
final class LineCollector: Sendable {
    private let stored = Mutex<[String]>([])
    func append(_ line: String) { stored.withLock { $0.append(line) } }
    var lines: [String] { stored.withLock { $0 } }
}

/// The fake API (TLS, 203.0.113.10:443) and the carrier (100.64.0.1:80) served in a private
/// namespace, driven by curl from a "mobile" (100.64.23.2) and a "Wi-Fi" (192.0.2.23) source.
final class ServedWorld: Sendable {
    let namespace = "cptest-api-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let directory: String
    let log = LineCollector()
    let services = Mutex<SimulatedWebServices?>(nil)

    init(carrierFaults: CarrierFaults = CarrierFaults()) throws {
        directory = try TemporaryDirectory.make("cptest-api")
        try sh(["ip", "netns", "add", namespace])
        do {
            try sh(["ip", "-n", namespace, "link", "set", "lo", "up"])
            for address in ["203.0.113.10", "100.64.0.1", "100.64.23.2", "192.0.2.23"] {
                try sh(["ip", "-n", namespace, "addr", "add", "\(address)/32", "dev", "lo"])
            }
            try sh([
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(directory)/key.pem",
                "-out", "\(directory)/cert.pem", "-days", "1", "-subj", "/CN=api.truid.test",
                "-addext", "subjectAltName=DNS:api.truid.test"
            ])
            let subscribers = FakeDirectory(byAddress: [
                "100.64.23.2": (SimulatedSIM(msisdn: TestWorld.msisdn), SimulatedNetwork())
            ])
            let log: @Sendable (String) -> Void = { [collector = self.log] line in collector.append(line) }
            let tls = try HTTPServer.TLSIdentity.files(
                certificate: "\(directory)/cert.pem", privateKey: "\(directory)/key.pem")
            let sockets = SimulatedWebServices.Sockets(
                apiTLS: [try socket("203.0.113.10", 443)], apiPlain: [try socket("203.0.113.10", 80)],
                carrier: [try socket("100.64.0.1", 80)])
            let configuration = FakeTruAPIConfiguration(
                clientID: TestWorld.clientID, clientSecret: TestWorld.clientSecret)
            let started = try SimulatedWebServices(
                configuration: configuration, carrierFaults: carrierFaults, subscribers: subscribers,
                tls: tls, sockets: sockets, apiNamespace: "cp-inet",
                carrierNamespace: "cp-carrier", log: log)
            services.withLock { $0 = started }
        } catch {
            tearDown()
            throw error
        }
    }

    func tearDown() {
        services.withLock {
            $0?.stop(); $0 = nil
        }
        _ = try? ProcessRunner.run(["ip", "netns", "delete", namespace])
        FileSystem.removeTree(directory)
    }

    /// curl from `source` with the API and carrier names pinned and the test CA trusted.
    func curl(_ arguments: [String], from source: String = "100.64.23.2") throws -> ProcessResult {
        try Curl.run(
            in: namespace,
            [
                "--interface", source, "--cacert", "\(directory)/cert.pem",
                "--resolve", "api.truid.test:443:203.0.113.10",
                "--resolve", "api.truid.test:80:203.0.113.10",
                "--resolve", "mno.carrier.test:80:100.64.0.1"
            ] + arguments)
    }

    private func socket(_ address: String, _ port: UInt16) throws -> Int32 {
        let fd = cshims_netns_listen_socket("/run/netns/\(namespace)", address, port)
        guard fd >= 0 else { throw ProcessError.spawn("listen \(address):\(port)", errno) }
        return fd
    }

    private func sh(_ arguments: [String]) throws {
        let result = try ProcessRunner.run(arguments)
        guard result.status == 0 else {
            throw ProcessError.spawn(arguments.joined(separator: " ") + ": " + result.stderr, 0)
        }
    }
}

@Suite(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .serialized, .ownThreads)
struct ServedFlowTests {
    private func token(_ world: ServedWorld) throws -> String {
        let result = try world.curl([
            "-u", "\(TestWorld.clientID):\(TestWorld.clientSecret)",
            "-d", "grant_type=client_credentials&scope=subscriber_check coverage",
            "https://api.truid.test/oauth2/v1/token"
        ])
        return try #require(
            JSONValue.parse(Array(result.stdout.utf8))?["access_token"]?.stringValue, "\(result.stderr)")
    }

    private func create(_ world: ServedWorld, _ token: String) throws -> (String, String) {
        let result = try world.curl([
            "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
            "-d", #"{"phone_number":"+447940448591"}"#,
            "https://api.truid.test/subscriber_check/v0.2/checks"
        ])
        let json = try #require(JSONValue.parse(Array(result.stdout.utf8)), "\(result.stdout) \(result.stderr)")
        return (
            try #require(json["check_id"]?.stringValue),
            try #require(json["_links"]?["check_url"]?["href"]?.stringValue)
        )
    }

    @Test func subscriberCheckV02OverRealSockets() throws {
        let world = try ServedWorld()
        defer { world.tearDown() }
        let bearer = try token(world)
        let (id, checkURL) = try create(world, bearer)
        let chain = try world.curl(["-L", "--max-redirs", "5", checkURL])
        let last = try #require(JSONValue.parse(Array(chain.stdout.utf8)), "\(chain.stdout) \(chain.stderr)")
        #expect(last["check_id"]?.stringValue == id)
        let code = try #require(last["code"]?.stringValue)
        let patched = try world.curl([
            "-X", "PATCH", "-H", "Authorization: Bearer \(bearer)",
            "-H", "Content-Type: application/json-patch+json",
            "-d", #"[{"op":"add","path":"/code","value":"\#(code)"}]"#,
            "https://api.truid.test/subscriber_check/v0.2/checks/\(id)"
        ])
        let result = try #require(JSONValue.parse(Array(patched.stdout.utf8)), "\(patched.stdout)")
        #expect(result["status"]?.stringValue == "COMPLETED")
        #expect(result["match"]?.boolValue == true)

        let lines = world.log.lines
        #expect(lines.count == 6)  // token, create, check_url, carrier, callback, PATCH
        #expect(!lines.contains { $0.contains(code) || $0.contains(bearer) })
        let carrierLine = try #require(
            lines.compactMap { JSONValue.parse(Array($0.utf8)) }.first { $0["namespace"]?.stringValue == "cp-carrier" })
        #expect(carrierLine["source"]?.stringValue == "100.64.23.2")
        #expect(carrierLine["status"]?.intValue == 302)
        #expect(carrierLine["method"]?.stringValue == "GET")
    }

    @Test func checkURLFromTheWiFiAddressGets412() throws {
        let world = try ServedWorld()
        defer { world.tearDown() }
        let (_, checkURL) = try create(world, try token(world))
        let result = try world.curl(["-L", "-w", "\n%{http_code} %{content_type}", checkURL], from: "192.0.2.23")
        #expect(result.stdout.hasSuffix("\n412 application/problem+json"))
        #expect(result.stdout.contains("#not_mobile_ip"))
    }

    @Test func cookiesAndTheHTTPDowngradeWorkOverRealSockets() throws {
        var faults = CarrierFaults()
        faults.requireCookies = true
        faults.relativeLocation = true
        faults.httpsDowngrade = true
        let world = try ServedWorld(carrierFaults: faults)
        defer { world.tearDown() }
        let (_, checkURL) = try create(world, try token(world))
        let withJar = try world.curl(["-L", "-b", "", "-w", "\n%{url_effective}", checkURL])
        #expect(withJar.stdout.contains("\"code\":"), "\(withJar.stdout) \(withJar.stderr)")
        #expect(withJar.stdout.contains("\nhttp://api.truid.test/subscriber_check/v0.2/checks/"))
        let (_, second) = try create(world, try token(world))
        let withoutJar = try world.curl(["-L", "-w", "\n%{http_code}", second])
        #expect(withoutJar.stdout.hasSuffix("\n403"))
    }

    @Test func aCarrierTimeoutLeavesTheClientWaiting() throws {
        var faults = CarrierFaults()
        faults.timeout = true
        let world = try ServedWorld(carrierFaults: faults)
        defer { world.tearDown() }
        let (_, checkURL) = try create(world, try token(world))
        let result = try world.curl(["-L", "--max-time", "1", checkURL])
        #expect(result.status == 28)
    }
}
