import CellpathCore
import CellpathCrypto
import FoundationEssentials
import Glibc
import HTTPServer
import SimulatedServices
import Synchronization
import SystemSupport
import TestSupport
import Testing

@testable import Server

/// A fresh 2048-bit RSA key in PEM, made with the openssl CLI as the simulated world makes it
/// (waited for on a thread of its own: the tests are async).
func makeSigningKey() async throws -> [UInt8] {
    let directory = try TemporaryDirectory.make("cptest-serve-key")
    defer { FileSystem.removeTree(directory) }
    let result = try await ProcessRunner.running([
        "openssl", "genpkey", "-algorithm", "RSA",
        "-pkeyopt", "rsa_keygen_bits:2048", "-out", "\(directory)/key.pem"
    ])
    try #require(result.status == 0, "\(result.stderr)")
    return try FileSystem.read("\(directory)/key.pem")
}

/// Counts the key-set fetches a verifier makes.
final class KeySetSource: Sendable {
    let sets: Mutex<[JSONValue]>
    let fetches = Atomic<Int>(0)
    init(_ sets: [JSONValue]) { self.sets = Mutex(sets) }
    func next() -> JSONValue? {
        fetches.add(1, ordering: .relaxed)
        return sets.withLock { $0.count > 1 ? $0.removeFirst() : $0.first }
    }
}

/// Webhooks signed by the simulator's signer (as tru.ID signs them), checked by serve's verifier.
struct WebhookVerifierTests {
    static let date = 1_790_000_000.0
    static let body = Array(#"{"check_id":"c1","status":"COMPLETED","match":true}"#.utf8)

    private func signed(_ signer: WebhookSigner, body: [UInt8] = WebhookVerifierTests.body) throws -> SignedWebhook {
        try #require(
            signer.webhook(
                to: "http://192.0.2.23:8080/callback", product: "subscriber_check", body: body, date: Self.date))
    }

    private func problem(
        _ verifier: WebhookVerifier, _ webhook: SignedWebhook, target: String? = nil, body: [UInt8]? = nil,
        now: Double = WebhookVerifierTests.date
    ) async -> String? {
        await verifier.problem(
            method: "POST", target: target ?? webhook.pathAndQuery, headers: webhook.headers,
            body: body ?? webhook.body, now: now)
    }

    @Test func aSignedWebhookVerifiesAndTamperedOnesDoNot() async throws {
        let signer = try WebhookSigner(privateKeyPEM: try await makeSigningKey())
        let source = KeySetSource([signer.keySet])
        let verifier = WebhookVerifier { source.next() }
        let webhook = try signed(signer)
        #expect(await problem(verifier, webhook) == nil)
        #expect(
            await problem(verifier, try signed(signer, body: Array(#"{"check_id":"c2","status":"COMPLETED"}"#.utf8)))
                == nil)
        #expect(source.fetches.load(ordering: .relaxed) == 1, "the key set is fetched once and cached")

        let forged = Array(String(decoding: webhook.body, as: UTF8.self).replacing("true", with: "false").utf8)
        #expect(await problem(verifier, webhook, body: forged) == "Digest does not match the body")
        var newDigest = webhook
        newDigest.headers.set("Digest", "SHA-256=" + Data(Digest.sha256(forged)).base64EncodedString())
        #expect(await problem(verifier, newDigest, body: forged) == "bad signature")
        #expect(await problem(verifier, webhook, target: "/elsewhere") == "bad signature")
        #expect(await problem(verifier, webhook, now: Self.date + 301) == "stale or missing Date")
        var unsigned = webhook
        unsigned.headers.remove("Authorization")
        unsigned.headers.remove("Signature")
        #expect(await problem(verifier, unsigned) == "no signature")
        var narrow = webhook
        narrow.headers.set(
            "Authorization", try #require(webhook.headers["Authorization"]).replacing("digest", with: ""))
        narrow.headers.remove("Signature")
        #expect(
            await problem(verifier, narrow) == "the signature does not cover (request-target), host, date and digest")
    }

    @Test func anUnknownKeyIDFetchesTheKeySetAgainAtMostOncePerInterval() async throws {
        let old = try WebhookSigner(privateKeyPEM: try await makeSigningKey())
        let rotated = try WebhookSigner(privateKeyPEM: try await makeSigningKey())
        let source = KeySetSource([old.keySet, rotated.keySet])
        let verifier = WebhookVerifier(refetchInterval: .zero) { source.next() }
        #expect(await problem(verifier, try signed(old)) == nil)
        #expect(await problem(verifier, try signed(rotated)) == nil, "a rotated key is found by fetching the set again")
        #expect(source.fetches.load(ordering: .relaxed) == 2)

        let stranger = try WebhookSigner(privateKeyPEM: try await makeSigningKey())
        let patient = WebhookVerifier(refetchInterval: .seconds(3600)) { source.next() }
        #expect(await problem(patient, try signed(rotated)) == nil)
        #expect(await problem(patient, try signed(stranger)) == "unknown keyId")
        #expect(await problem(patient, try signed(stranger)) == "unknown keyId")
        #expect(source.fetches.load(ordering: .relaxed) == 3, "unknown keyIds do not make serve hammer the API")
    }

    @Test func aWebhookIsAcceptedOnceWithinItsDateWindow() async throws {
        let signer = try WebhookSigner(privateKeyPEM: try await makeSigningKey())
        let verifier = WebhookVerifier { signer.keySet }
        let webhook = try signed(signer)
        #expect(await problem(verifier, webhook) == nil)
        for seconds in stride(from: 0.0, through: 300, by: 6) {
            #expect(
                await problem(verifier, webhook, now: Self.date + seconds)
                    == "replayed (this signature was already accepted)")
        }
        #expect(
            await problem(verifier, webhook, now: Self.date + 301) == "stale or missing Date",
            "then it is stale")
        #expect(
            await problem(verifier, try signed(signer, body: Array(#"{"check_id":"c3","status":"COMPLETED"}"#.utf8)))
                == nil,
            "another webhook has a signature of its own")
    }

    @Test func theReplayCacheIsBoundedAndForgetsExpiredSignatures() {
        var accepted = AcceptedSignatures(capacity: 2)
        let answers = [([UInt8(1)], 0.0), ([1], 1), ([2], 2), ([3], 3), ([1], 4), ([3], 5)].map {
            accepted.insert($0.0, until: 100, now: $0.1)
        }
        #expect(answers == [true, false, true, true, true, false], "at capacity the oldest is forgotten first")
        #expect(accepted.count == 2)

        var expiring = AcceptedSignatures(capacity: 100)
        let early = (0 ..< 50).map { expiring.insert([UInt8($0)], until: Double($0), now: 0) }
        let late = expiring.insert([200], until: 1000, now: 60)
        #expect(early.allSatisfy { $0 } && late)
        #expect(expiring.count == 1, "signatures whose Date left the window are dropped")
    }

    @Test func httpDates() {
        #expect(WebhookVerifier.httpDate("Mon, 21 Sep 2026 14:13:20 GMT") == 1_790_000_000)
        #expect(WebhookVerifier.httpDate("Mon, 21 Sep 2026 14:13:20 CET") == nil)
        // Found by the `serve-request` fuzz target (docs/fuzzing.md): days the month does not have.
        #expect(WebhookVerifier.httpDate("Mon, 29 Feb 2027 10:00:00 GMT") == nil)
        #expect(WebhookVerifier.httpDate("Thu, 31 Apr 2026 10:00:00 GMT") == nil)
        #expect(WebhookVerifier.httpDate("Tue, 29 Feb 2028 10:00:00 GMT") == 1_835_431_200)
        #expect(WebhookVerifier.httpDate("yesterday") == nil)
    }
}
