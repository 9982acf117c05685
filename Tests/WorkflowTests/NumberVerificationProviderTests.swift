import CellpathCore
import CellularHTTP
import Testing

@testable import CAMARA
@testable import Workflow

/// Number Verification as `verify`'s provider, against the fake operator in process: create is
/// the authorization request, the chain ends at the redirect URI under the provider's rules, and
/// complete exchanges the code the ending carried and asks `verify`.
@Suite(.ownThreads)
struct NumberVerificationProviderTests {
    static func provider(_ transport: OperatorTransport) throws -> NumberVerificationProvider {
        try NumberVerificationProvider(
            name: "CAMARA", rules: "camara-oidc",
            verification: CAMARANumberVerification(
                client: transport.client(), redirectURI: OperatorTransport.redirectURI),
            hashed: false)
    }

    /// Creates a verification of `number`, runs its device leg from `address` under the
    /// provider's rules, and completes it with what the chain ended with.
    static func run(
        _ provider: NumberVerificationProvider, _ transport: OperatorTransport, _ number: String, from address: String,
        rewrite: @escaping @Sendable (String) -> String = { $0 }
    ) async throws -> CheckVerdict {
        let created = try await provider.create(phoneNumber: number, options: CheckOptions())
        let request = provider.deviceLeg.applied(to: FetchRequest(url: created.checkURL))
        #expect(request.strict, "https only")
        let trace = await transport.deviceLeg(from: address, rewrite: rewrite)(request)
        let ending = provider.deviceLeg.ending.callback(of: trace, checkID: created.checkID)
        return try await provider.complete(created, ending: ending)
    }

    @Test func theSubscribersNumberMatchesAndAnotherDoesNot() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let provider = try Self.provider(transport)
        let verdict = try await Self.run(provider, transport, OneSubscriber.msisdn, from: OneSubscriber.address)
        #expect(verdict.match == true && verdict.status == "verified")
        let other = try await Self.run(provider, transport, "+447700900123", from: OneSubscriber.address)
        #expect(other.match == false && other.status == "not_verified")
        #expect(transport.fake.callbackRequests == 0)
    }

    /// With the operator's endpoints known (no discovery), creating a verification starts the
    /// token endpoint's lookup, for the code exchange after the device leg, and sends nothing;
    /// after a discovery request, whose lookup and connection the exchange reuses, it does not.
    @Test func theTokenEndpointIsLookedUpAheadWhenNoDiscoveryWentBefore() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let known = try NumberVerificationProvider(
            name: "CAMARA", rules: "camara-oidc",
            verification: CAMARANumberVerification(
                client: transport.client(knownMetadata: true), redirectURI: OperatorTransport.redirectURI),
            hashed: false)
        _ = try await known.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        #expect(transport.lookedUpAhead == [transport.fake.tokenEndpoint])
        #expect(transport.requests.isEmpty)
        let verdict = try await Self.run(known, transport, OneSubscriber.msisdn, from: OneSubscriber.address)
        #expect(verdict.match == true)

        let discovering = try OperatorTransport(key: try await makeClientKey(.es256))
        _ = try await Self.provider(discovering).create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        #expect(discovering.lookedUpAhead.isEmpty)
        #expect(discovering.requests.count == 1, "the discovery request")
    }

    @Test func anotherStateIsRefused() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let provider = try Self.provider(transport)
        let error = await #expect(throws: CellpathError.self) {
            _ = try await Self.run(
                provider, transport, OneSubscriber.msisdn, from: OneSubscriber.address,
                rewrite: { $0.replacing("state=", with: "state=0") })
        }
        #expect(error?.kind == .protocolError, "\(String(describing: error))")
    }

    @Test func aDeviceTheOperatorDoesNotKnowIsRefusedAsUnavailable() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let error = await #expect(throws: CellpathError.self) {
            _ = try await Self.run(try Self.provider(transport), transport, OneSubscriber.msisdn, from: "192.0.2.23")
        }
        #expect(error?.kind == .unavailable && error?.message.contains("access_denied") == true)
    }

    @Test func aRedirectURIThatIsNoURLIsAConfigurationError() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        #expect(throws: CellpathError.self) {
            _ = try NumberVerificationProvider(
                name: "CAMARA", rules: "camara-oidc",
                verification: CAMARANumberVerification(client: transport.client(), redirectURI: "not a url"),
                hashed: false)
        }
    }
}
