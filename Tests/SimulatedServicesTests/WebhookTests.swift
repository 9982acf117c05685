import COpenSSL
import CShims
import CellpathCore
import CellpathCrypto
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

/// A webhook receiver as tru.ID's dev-server is one (http-signature + jwks-rsa), written here
/// against libcrypto directly: finds the key by `keyId` in the published JWK Set, rebuilds the
/// signing string from the request it got, checks `Digest` against the body and the RSA-SHA256
/// signature against the key.
struct WebhookReceiver {
    let keySet: JSONValue

    /// Why the request does not verify, or nil when it does.
    func problem(method: String, target: String, headers: HTTPHeaders, body: [UInt8]) -> String? {
        guard let authorization = headers["Authorization"], authorization.hasPrefix("Signature ") else {
            return "no Authorization: Signature"
        }
        let parameters = Self.parameters(String(authorization.dropFirst("Signature ".count)))
        guard parameters == Self.parameters(headers["Signature"] ?? "") else {
            return "Signature differs from Authorization"
        }
        guard parameters["algorithm"] == "rsa-sha256", let keyID = parameters["keyId"],
            let names = parameters["headers"],
            let signature = parameters["signature"].flatMap({ Data(base64Encoded: $0) })
        else { return "incomplete parameters" }
        guard names == "(request-target) host date x-tru-callback digest" else { return "signs \(names)" }
        guard let jwk = keySet["keys"]?.arrayValue?.first(where: { $0["kid"]?.stringValue == keyID }) else {
            return "unknown keyId"
        }
        guard headers["Digest"] == "SHA-256=" + Data(Digest.sha256(body)).base64EncodedString() else {
            return "digest mismatch"
        }
        var lines: [String] = []
        for name in names.split(separator: " ").map(String.init) {
            if name == "(request-target)" {
                lines.append("(request-target): \(method.lowercased()) \(target)"); continue
            }
            guard let value = headers[name] else { return "missing \(name)" }
            lines.append("\(name): \(value)")
        }
        guard Self.verify(Array(lines.joined(separator: "\n").utf8), signature: Array(signature), jwk: jwk) else {
            return "bad signature"
        }
        return nil
    }

    static func parameters(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for piece in text.split(separator: ",") {
            let pair = piece.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[1].hasPrefix("\""), pair[1].hasSuffix("\"") else { continue }
            result[pair[0]] = String(pair[1].dropFirst().dropLast())
        }
        return result
    }

    /// RSASSA-PKCS1-v1_5 SHA-256 verification with the RSA public key of `jwk`.
    static func verify(_ data: [UInt8], signature: [UInt8], jwk: JSONValue) -> Bool {
        guard jwk["kty"]?.stringValue == "RSA", let n = jwk["n"]?.stringValue.flatMap(Base64URL.decode),
            let e = jwk["e"]?.stringValue.flatMap(Base64URL.decode),
            let builder = OSSL_PARAM_BLD_new()
        else { return false }
        defer { OSSL_PARAM_BLD_free(builder) }
        let modulus = BN_bin2bn(n, Int32(n.count), nil), exponent = BN_bin2bn(e, Int32(e.count), nil)
        defer { BN_free(modulus); BN_free(exponent) }
        // The parameters point at their names, not copies: the names must live until the key is made.
        let nName = strdup("n"), eName = strdup("e")
        defer { free(nName); free(eName) }
        guard OSSL_PARAM_BLD_push_BN(builder, nName, modulus) == 1,
            OSSL_PARAM_BLD_push_BN(builder, eName, exponent) == 1,
            let parameters = OSSL_PARAM_BLD_to_param(builder)
        else { return false }
        defer { OSSL_PARAM_free(parameters) }
        guard let keyContext = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return false }
        defer { EVP_PKEY_CTX_free(keyContext) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(keyContext) == 1,
            EVP_PKEY_fromdata(keyContext, &key, Int32(OSSL_KEYMGMT_SELECT_PUBLIC_KEY), parameters) == 1, let key
        else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        return EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1
            && EVP_DigestVerify(context, signature, signature.count, data, data.count) == 1
    }
}

/// A fresh 2048-bit RSA key in PEM, made with the openssl CLI as the world makes it.
func makeWebhookKey() throws -> [UInt8] {
    let directory = try TemporaryDirectory.make("cptest-webhook")
    defer { FileSystem.removeTree(directory) }
    let result = try ProcessRunner.run([
        "openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
        "-out", "\(directory)/key.pem"
    ])
    try #require(result.status == 0, "\(result.stderr)")
    return try FileSystem.read("\(directory)/key.pem")
}

/// Webhooks collected from the API instead of being delivered.
final class WebhookOutbox: Sendable {
    private let stored = Mutex<[SignedWebhook]>([])
    func append(_ webhook: SignedWebhook) { stored.withLock { $0.append(webhook) } }
    var webhooks: [SignedWebhook] { stored.withLock { $0 } }
}

@Suite(.serialized, .ownThreads) struct WebhookTests {
    static let callbackURL = "http://192.0.2.23:8080/truid/callback?project=1"

    /// A world whose API signs webhooks with a fresh key into `outbox`.
    private func world(
        callback: String? = WebhookTests.callbackURL, outbox: WebhookOutbox,
        network: SimulatedNetwork = SimulatedNetwork()
    ) throws -> (TestWorld, WebhookSigner) {
        var api = APIFaults()
        api.callbackURL = callback
        let signer = try WebhookSigner(privateKeyPEM: try makeWebhookKey())
        return (
            TestWorld(
                network: network, api: api, webhooks: WebhookDispatch(signer: signer, deliver: { outbox.append($0) })),
            signer
        )
    }

    private func keySet(_ world: TestWorld) throws -> JSONValue {
        let response = world.send("GET", "https://api.truid.test/.well-known/jwks.json", from: TestWorld.wifiAddress)
        try #require(response.status == 200)
        return try #require(response.json)
    }

    @Test func theKeyIsPublishedAsAnRSASigningJWK() throws {
        let (world, signer) = try world(outbox: WebhookOutbox())
        let keys = try #require(try keySet(world)["keys"]?.arrayValue)
        #expect(keys.count == 1)
        #expect(keys[0]["kty"]?.stringValue == "RSA")
        #expect(keys[0]["use"]?.stringValue == "sig")
        #expect(keys[0]["alg"]?.stringValue == "RS256")
        #expect(keys[0]["kid"]?.stringValue == signer.keyID)
        #expect(keys[0]["e"]?.stringValue == "AQAB")
        #expect((keys[0]["n"]?.stringValue.flatMap(Base64URL.decode)?.count ?? 0) == 256)
        #expect(
            TestWorld().send("GET", "https://api.truid.test/.well-known/jwks.json").json?["keys"]?.arrayValue?.isEmpty
                == true)
    }

    @Test func aCompletedV02CheckIsPostedSignedAndVerifies() throws {
        let outbox = WebhookOutbox()
        let (world, _) = try world(outbox: outbox)
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        let code = try #require(world.follow(checkURL).last?.response.json?["code"]?.stringValue)
        #expect(outbox.webhooks.isEmpty)  // not an end status before the code is exchanged
        #expect(patchCode(world, token, id, code).status == 200)
        let webhook = try #require(outbox.webhooks.first)
        #expect(outbox.webhooks.count == 1)
        #expect(webhook.url == WebhookTests.callbackURL)
        #expect(
            webhook.host == "192.0.2.23" && webhook.port == 8080 && webhook.pathAndQuery == "/truid/callback?project=1")
        #expect(webhook.headers["Host"] == "192.0.2.23:8080")
        #expect(webhook.headers["x-tru-callback"] == "subscriber_check")
        #expect(webhook.headers["Date"] == "Mon, 21 Sep 2026 14:13:20 GMT")  // the manual clock's time
        let payload = try #require(JSONValue.parse(webhook.body))
        #expect(payload["check_id"]?.stringValue == id)
        #expect(payload["status"]?.stringValue == "COMPLETED")
        #expect(payload["match"]?.boolValue == true)
        let receiver = WebhookReceiver(keySet: try keySet(world))
        #expect(
            receiver.problem(method: "POST", target: webhook.pathAndQuery, headers: webhook.headers, body: webhook.body)
                == nil)
    }

    @Test func aReceiverRefusesTamperedWebhooks() throws {
        let outbox = WebhookOutbox()
        let (world, _) = try world(outbox: outbox)
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token, version: "v0.1")
        _ = world.follow(checkURL)  // v0.1 completes at the last hop
        let webhook = try #require(outbox.webhooks.first)
        #expect(JSONValue.parse(webhook.body)?["check_id"]?.stringValue == id)
        let receiver = WebhookReceiver(keySet: try keySet(world))
        let forgedBody = Array(String(decoding: webhook.body, as: UTF8.self).replacing("true", with: "false").utf8)
        #expect(
            receiver.problem(method: "POST", target: webhook.pathAndQuery, headers: webhook.headers, body: forgedBody)
                == "digest mismatch")
        var forgedDigest = webhook.headers
        forgedDigest.set("Digest", "SHA-256=" + Data(Digest.sha256(forgedBody)).base64EncodedString())
        #expect(
            receiver.problem(method: "POST", target: webhook.pathAndQuery, headers: forgedDigest, body: forgedBody)
                == "bad signature")
        #expect(
            receiver.problem(method: "POST", target: "/elsewhere", headers: webhook.headers, body: webhook.body)
                == "bad signature")
        // A key set without the signing key (another world's) does not verify it either.
        let (other, _) = try self.world(outbox: WebhookOutbox())
        #expect(
            WebhookReceiver(keySet: try keySet(other)).problem(
                method: "POST", target: webhook.pathAndQuery,
                headers: webhook.headers, body: webhook.body) == "unknown keyId")
    }

    @Test func errorsAndExpiryAreAnnouncedOnceAndSIMCheckIsNot() throws {
        let outbox = WebhookOutbox()
        let (world, _) = try world(outbox: outbox)
        let token = world.token()
        let (wifiID, wifiURL) = try createCheck(world, token, product: "phone_check")
        #expect(world.send("GET", wifiURL, from: TestWorld.wifiAddress).status == 412)
        let (expiringID, _) = try createCheck(world, token)
        _ = world.create("/sim_check/v0.1/checks", #"{"phone_number":"+447940448591"}"#, token: token)
        world.clock.advance(seconds: 121)
        world.api.expireDueChecks()
        world.api.expireDueChecks()
        _ = getCheck(world, token, expiringID)
        let announced = outbox.webhooks.compactMap { JSONValue.parse($0.body) }
        #expect(announced.map { $0["check_id"]?.stringValue } == [wifiID, expiringID])
        #expect(announced.map { $0["status"]?.stringValue } == ["ERROR", "EXPIRED"])
        #expect(outbox.webhooks.map { $0.headers["x-tru-callback"] } == ["phone_check", "subscriber_check"])
    }

    @Test func withoutACallbackURLNothingIsSent() throws {
        let outbox = WebhookOutbox()
        let (world, _) = try world(callback: nil, outbox: outbox)
        let token = world.token()
        let (_, checkURL) = try createCheck(world, token, version: "v0.1")
        #expect(world.follow(checkURL).last?.response.status == 200)
        #expect(outbox.webhooks.isEmpty)
    }
}

/// The simulator's poster delivering to a receiver served in a namespace the test creates.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads)
struct WebhookDeliveryTests {
    /// Receives POSTs on 192.0.2.23:8080 in its own namespace; answers `statuses` in turn (then 200).
    final class Receiver: Sendable {
        let namespace = "cptest-hook-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        private let server = Mutex<HTTPServer?>(nil)
        private let received = Mutex<[HTTPRequest]>([])
        private let statuses: Mutex<[Int]>

        init(statuses: [Int] = []) throws {
            self.statuses = Mutex(statuses)
            try Self.sh(["ip", "netns", "add", namespace])
            do {
                try Self.sh(["ip", "-n", namespace, "link", "set", "lo", "up"])
                try Self.sh(["ip", "-n", namespace, "addr", "add", "192.0.2.23/32", "dev", "lo"])
                let fd = cshims_netns_listen_socket("/run/netns/\(namespace)", "192.0.2.23", 8080)
                guard fd >= 0 else { throw ProcessError.spawn("listen", errno) }
                let started = try HTTPServer(listener: .socket(fd)) { [self] request in
                    received.withLock { $0.append(request) }
                    let status = self.statuses.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
                    return HTTPResponse(status: status, contentType: "text/plain", body: "ok")
                }
                server.withLock { $0 = started }
            } catch {
                tearDown()
                throw error
            }
        }

        var requests: [HTTPRequest] { received.withLock { $0 } }

        /// Waits (bounded) until `count` requests arrived.
        func wait(for count: Int) -> [HTTPRequest] {
            Poll.until(timeout: .seconds(10), interval: .milliseconds(50)) { requests.count >= count }
            return requests
        }

        func tearDown() {
            server.withLock {
                $0?.stop(); $0 = nil
            }
            _ = try? ProcessRunner.run(["ip", "netns", "delete", namespace])
        }

        private static func sh(_ arguments: [String]) throws {
            let result = try ProcessRunner.run(arguments)
            guard result.status == 0 else {
                throw ProcessError.spawn(arguments.joined(separator: " ") + ": " + result.stderr, 0)
            }
        }
    }

    private func signedWebhook() throws -> (SignedWebhook, WebhookSigner) {
        let signer = try WebhookSigner(privateKeyPEM: try makeWebhookKey())
        let body = Array(#"{"check_id":"c-1","status":"COMPLETED","match":true}"#.utf8)
        let webhook = try #require(
            signer.webhook(
                to: "http://192.0.2.23:8080/callback", product: "phone_check", body: body,
                date: WallClock.now))
        return (webhook, signer)
    }

    @Test func theReceiverGetsTheSignedPostInItsNamespace() throws {
        let receiver = try Receiver()
        defer { receiver.tearDown() }
        let (webhook, signer) = try signedWebhook()
        let poster = try WebhookPoster(namespace: receiver.namespace, retryDelays: [], log: { _ in })
        defer { poster.stop() }
        poster.deliver(webhook)
        let requests = receiver.wait(for: 1)
        let request = try #require(requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/callback")
        #expect(request.body == webhook.body)
        let verdict = WebhookReceiver(keySet: signer.keySet).problem(
            method: request.method, target: request.path,
            headers: request.headers, body: request.body)
        #expect(verdict == nil)
    }

    @Test func aNon200AnswerIsRetriedUntil200() throws {
        let receiver = try Receiver(statuses: [500, 503])
        defer { receiver.tearDown() }
        let (webhook, _) = try signedWebhook()
        let lines = LineCollector()
        let poster = try WebhookPoster(
            namespace: receiver.namespace, retryDelays: [0.1, 0.1, 0.1, 0.1], log: { lines.append($0) })
        defer { poster.stop() }
        poster.deliver(webhook)
        #expect(receiver.wait(for: 3).count == 3)
        usleep(500_000)
        #expect(receiver.requests.count == 3)  // no attempt after the 200
        #expect(lines.lines.count == 3)
        #expect(lines.lines.last?.hasSuffix(": 200") == true)
    }

    /// A webhook to a port nothing listens on in the receiver's namespace: every attempt is refused at once.
    private func refusedWebhook() throws -> SignedWebhook {
        let signer = try WebhookSigner(privateKeyPEM: try makeWebhookKey())
        return try #require(
            signer.webhook(
                to: "http://192.0.2.23:9/callback", product: "phone_check",
                body: Array(#"{"check_id":"c-1","status":"EXPIRED"}"#.utf8), date: WallClock.now))
    }

    /// The threads of this process now.
    private func threadCount() throws -> Int {
        let status = String(decoding: try FileSystem.read("/proc/self/status"), as: UTF8.self)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Threads:") })
        return try #require(Int(line.dropFirst("Threads:".count).trimmingPrefix(while: \.isWhitespace)))
    }

    @Test func deliveriesWaitingForTheirRetryHoldNoThread() throws {
        let receiver = try Receiver()
        defer { receiver.tearDown() }
        let webhook = try refusedWebhook()
        let lines = LineCollector()
        let before = try threadCount()
        let poster = try WebhookPoster(
            namespace: receiver.namespace, retryDelays: [600], workers: 2, log: { lines.append($0) })
        defer { poster.stop() }
        for _ in 0 ..< 200 { #expect(poster.deliver(webhook)) }
        Poll.until(timeout: .seconds(30), interval: .milliseconds(50)) { lines.lines.count >= 200 }
        #expect(lines.lines.count == 200)
        #expect(
            lines.lines.allSatisfy {
                $0.hasSuffix("attempt 1 POST http://192.0.2.23:9/callback: connect: Connection refused")
            })
        // 200 deliveries wait for their second attempt: on the pool's 2 threads, not one each. The
        // count is the process's: other tests' threads come and go beside it, 200 held ones would stay.
        #expect(try Poll.until(timeout: .seconds(10)) { try threadCount() - before <= 2 })
    }

    @Test func aWebhookBeyondTheQueuesCapacityIsDroppedAndLogged() throws {
        let receiver = try Receiver()
        defer { receiver.tearDown() }
        let webhook = try refusedWebhook()
        let lines = LineCollector()
        let poster = try WebhookPoster(
            namespace: receiver.namespace, retryDelays: [600], capacity: 3, workers: 1,
            log: { lines.append($0) })
        defer { poster.stop() }
        // Deliveries keep their place through their retries: the fourth and fifth find the queue full.
        #expect((0 ..< 5).map { _ in poster.deliver(webhook) } == [true, true, true, false, false])
        #expect(
            lines.lines.contains(
                "webhook phone_check to http://192.0.2.23:9/callback dropped: 3 deliveries under way (1 dropped so far)"
            ))
        #expect(!lines.lines.contains { $0.contains("(2 dropped so far)") })  // not one line per dropped webhook
        poster.stop()
        #expect(!poster.deliver(webhook))
    }
}
