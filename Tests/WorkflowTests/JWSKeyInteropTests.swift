import CellpathCore
import CellpathCrypto
import SystemSupport
import TestSupport
import Testing

/// `JWSKey` against the openssl CLI, an implementation of its own: RS256 signatures are the
/// same bytes; an ES256 `r‖s` signature re-encoded as DER by openssl verifies there, and an
/// openssl DER signature taken apart into `r‖s` verifies here.
@Suite(.ownThreads)
struct JWSKeyInteropTests {
    static let data = Array("header.claims".utf8)

    /// Runs openssl with `arguments`; its stdout.
    static func openssl(_ arguments: [String]) throws -> String {
        let result = try ProcessRunner.run(["openssl"] + arguments)
        try #require(result.status == 0, "openssl \(arguments): \(result.stderr)")
        return result.stdout
    }

    static func withKey(_ algorithm: [String], _ body: (String, JWSKey) throws -> Void) throws {
        let directory = try TemporaryDirectory.make("cptest-jws")
        defer { FileSystem.removeTree(directory) }
        _ = try openssl(["genpkey"] + algorithm + ["-out", directory + "/key.pem"])
        _ = try openssl(["pkey", "-in", directory + "/key.pem", "-pubout", "-out", directory + "/pub.pem"])
        try FileSystem.write(data, to: directory + "/data")
        try body(directory, try JWSKey(pem: try FileSystem.read(directory + "/key.pem")))
    }

    @Test func rs256IsOpenSSLsSignature() throws {
        try Self.withKey(["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]) { directory, key in
            #expect(key.algorithm == .rs256)
            _ = try Self.openssl([
                "dgst", "-sha256", "-sign", directory + "/key.pem", "-out", directory + "/sig", directory + "/data"
            ])
            #expect(key.sign(Self.data) == (try FileSystem.read(directory + "/sig")))
        }
    }

    @Test func es256RawSignaturesMeanTheSameToOpenSSL() throws {
        try Self.withKey(["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]) { directory, key in
            #expect(key.algorithm == .es256)
            // Ours, as DER built by openssl from r and s: openssl verifies it.
            let ours = try #require(key.sign(Self.data))
            #expect(ours.count == 64)
            func hex(_ bytes: ArraySlice<UInt8>) -> String {
                bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            }
            try FileSystem.write(
                Array(
                    "asn1=SEQUENCE:sig\n[sig]\nr=INTEGER:0x\(hex(ours[0 ..< 32]))\ns=INTEGER:0x\(hex(ours[32...]))\n"
                        .utf8),
                to: directory + "/sig.conf")
            _ = try Self.openssl(["asn1parse", "-genconf", directory + "/sig.conf", "-out", directory + "/sig.der"])
            let verified = try Self.openssl([
                "dgst", "-sha256", "-verify", directory + "/pub.pem", "-signature", directory + "/sig.der",
                directory + "/data"
            ])
            #expect(verified.contains("Verified OK"))

            // openssl's DER, taken apart into r and s (32 bytes each): ours verifies it.
            _ = try Self.openssl([
                "dgst", "-sha256", "-sign", directory + "/key.pem", "-out", directory + "/theirs.der",
                directory + "/data"
            ])
            let parsed = try Self.openssl(["asn1parse", "-inform", "DER", "-in", directory + "/theirs.der"])
            let integers = parsed.split(separator: "\n").compactMap { line in
                line.contains("INTEGER") ? line.split(separator: ":").last.map(String.init) : nil
            }
            try #require(integers.count == 2, "\(parsed)")
            let raw = integers.flatMap { hexText -> [UInt8] in
                let padded = String(repeating: "0", count: max(0, 64 - hexText.count)) + hexText
                return stride(from: 0, to: 64, by: 2).map { i in
                    let start = padded.index(padded.startIndex, offsetBy: i)
                    return UInt8(padded[start ..< padded.index(start, offsetBy: 2)], radix: 16)!
                }
            }
            let publicKey = try JWSKey(pem: try FileSystem.read(directory + "/pub.pem"), isPrivate: false)
            #expect(publicKey.verifies(raw, of: Self.data))
            #expect(!publicKey.verifies(raw, of: Array("another".utf8)))
        }
    }
}
