import Testing

@testable import Server

/// Which `Host` values name serve (against DNS rebinding), without a server.
struct HostNameTests {
    private func allowed(_ host: String, listen: String, names: [String] = []) -> Bool {
        guard let name = DevServerRoutes.hostName(host) else { return false }
        return DevServerRoutes.hostAllowed(name, ServeSettings(listenAddress: listen, serverNames: names))
    }

    @Test func theListenAddressHowEverWritten() {
        #expect(allowed("127.0.0.1:8080", listen: "127.0.0.1"))
        #expect(allowed("[::1]:8080", listen: "::1"))
        #expect(allowed("[0:0::1]", listen: "::1"))
        #expect(allowed("[::ffff:127.0.0.1]:8080", listen: "127.0.0.1"))
        #expect(!allowed("127.0.0.2:8080", listen: "127.0.0.1"))
        #expect(!allowed("", listen: "127.0.0.1"))
    }

    @Test func localhostOnlyWhereLoopbackReachesServe() {
        #expect(allowed("localhost:8080", listen: "127.0.0.1"))
        #expect(allowed("LOCALHOST", listen: "0.0.0.0"))
        #expect(!allowed("localhost", listen: "192.0.2.23"))
    }

    @Test func anyNumericAddressOnAWildcardListener() {
        #expect(allowed("192.0.2.23:8080", listen: "0.0.0.0"))
        #expect(allowed("[2001:db8::1]:8080", listen: "::"))
        #expect(!allowed("attacker.example", listen: "0.0.0.0"))
    }

    @Test func configuredNamesWithoutCaseOrFinalDot() {
        #expect(allowed("Serve.Example.:443", listen: "127.0.0.1", names: ["serve.example"]))
        #expect(!allowed("other.example", listen: "127.0.0.1", names: ["serve.example"]))
    }
}
