import CellpathCore
import Dispatch
import Glibc
import HTTPServer
import SimulatedServices
import Synchronization

@testable import Server

/// `serve`'s webhook check (`WebhookVerifier.problem`, with `RSAPublicKey` reading the JWK Set)
/// on a webhook the simulator's signer signed as tru.ID does, then changed by the input. Input: a
/// list of changes, each an operation byte and a value (a length byte, then that many bytes): the
/// request target, the body, the method, a header set or removed (the signed ones, the signature's
/// two places, or one the input names), the JWK Set (the signer's key with one member replaced, or
/// JSON of the input's), and the verifier's clock.
///
/// Invariants: the webhook as signed verifies; a webhook that verifies has the signed method,
/// target, body, Host, Date and x-tru-callback as serve reads them (what a signature does not
/// cover, or covers in another order, is refused), its Date within 300 s of the clock, and a key
/// set that holds the signer's key.
enum WebhookTarget: FuzzTarget {
    static let name = "webhook"

    static let signedAt = 1_790_000_000.0
    static let signer: WebhookSigner = {
        guard let pipe = popen("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 2>/dev/null", "r") else {
            fatalError("openssl: \(errno)")
        }
        var pem: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = fread(&buffer, 1, buffer.count, pipe), count > 0 { pem += buffer.prefix(count) }
        pclose(pipe)
        do throws(CellpathError) { return try WebhookSigner(privateKeyPEM: pem) } catch {
            fatalError("webhook key: \(error.message)")
        }
    }()
    static let original: SignedWebhook = {
        let body = Array(#"{"check_id":"c1","status":"COMPLETED","match":true}"#.utf8)
        guard
            let webhook = signer.webhook(
                to: "http://192.0.2.23:8080/callback?n=1", product: "subscriber_check", body: body, date: signedAt)
        else {
            fatalError("the signer refused its own URL")
        }
        return webhook
    }()

    static func run(_ input: [UInt8]) {
        var input = FuzzInput(input)
        var method = "POST", target = original.pathAndQuery, headers = original.headers, body = original.body
        var keySet = signer.keySet, now = signedAt
        // The signed headers and the signature's two places, and two in other cases (names are case-insensitive).
        let headerNames = ["Host", "Date", "Digest", "x-tru-callback", "Authorization", "Signature", "host", "DATE"]
        let unchanged = input.isEmpty
        while !input.isEmpty {
            let operation = input.byte()
            let value = input.chunk()
            let text = String(decoding: value, as: UTF8.self)
            switch operation % 8 {
            case 0: target = text
            case 1: body = value
            case 2: method = text
            case 3: headers.set(headerNames[Int(operation / 8) % headerNames.count], text)
            case 4: headers.remove(headerNames[Int(operation / 8) % headerNames.count])
            case 5:
                // An added header: the name is the text up to the first colon.
                let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                headers.add(String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
            case 6:
                if operation & 0x80 != 0 {
                    keySet = JSONValue.parse(value) ?? .null
                } else {
                    let member = ["kty", "n", "e", "kid", "alg"][Int(operation / 8) % 5]
                    guard case .object(let members) = signer.publicJWK else { return }
                    keySet = .object([
                        ("keys", .array([.object(members.map { $0.0 == member ? ($0.0, .string(text)) : $0 })]))
                    ])
                }
            default:
                now += Double(Int16(truncatingIfNeeded: Int(value.first ?? 0) << 8 | Int(value.dropFirst().first ?? 0)))
            }
        }

        let problem = verify(method: method, target: target, headers: headers, body: body, keySet: keySet, now: now)
        if unchanged {
            require(problem == nil, "the webhook as signed is refused: \(problem ?? "")")
        }
        guard problem == nil else { return }
        let signed = original.headers
        require(
            method.lowercased() == "post" && target == original.pathAndQuery && body == original.body,
            "a webhook verified with method \(shown(method)), target \(shown(target)), body \(shown(String(decoding: body, as: UTF8.self)))"
        )
        for name in ["Host", "Date", "x-tru-callback"] {
            require(
                headers[name] == signed[name], "a webhook verified with \(name): \(shown(headers[name] ?? "(none)"))")
        }
        require(abs(signedAt - now) <= 300, "a webhook dated \(signedAt) verified at \(now)")
        require(
            keySet["keys"]?.arrayValue?.contains { RSAPublicKey(jwk: $0) == RSAPublicKey(jwk: signer.publicJWK) }
                == true,
            "a webhook verified with a key set without the signer's key: \(shown(keySet.serialized))")
    }

    /// `WebhookVerifier.problem` on a fresh verifier whose key set is `keySet`, waited for.
    private static func verify(
        method: String, target: String, headers: HTTPHeaders, body: [UInt8], keySet: JSONValue, now: Double
    ) -> String? {
        let result = Mutex<String??>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let verifier = WebhookVerifier(refetchInterval: .zero) { keySet }
            let problem = await verifier.problem(method: method, target: target, headers: headers, body: body, now: now)
            result.withLock { $0 = .some(problem) }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 ?? "no answer" }
    }
}
