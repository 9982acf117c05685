import CellpathCore
import CellularHTTP
import FoundationEssentials
import SimulatedServices
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

@testable import Workflow

/// `TruAPIClient` against the simulator's fake tru.ID API, called in-process: the products'
/// flows, tokens, retries and the mapping of failures.
struct TruAPIClientTests {
    // MARK: Flows

    @Test func subscriberCheckV02CompletesWithTheCodeFromTheChain() async throws {
        let transport = FakeAPITransport()
        let client = fakeClient(transport)
        let created = try await client.createCheck(
            .subscriberCheck, version: .v0_2, phoneNumber: OneSubscriber.msisdn, referenceID: "ref-1")
        #expect(created.status == .accepted && created.ttl == 120 && created.json[string: "reference_id"] == "ref-1")
        let last = transport.openCheckURL(created.checkURL)
        let code = try #require(JSONValue.parse(last.body)?[string: "code"], "\(last.status) \(last.bodyText)")
        let result = try await client.completeCheck(.subscriberCheck, checkID: created.checkID, code: code)
        #expect(result.checkID == created.checkID && result.status == .completed && result.match == true)
        #expect(result.noSimChange != nil)

        let patch = try #require(transport.requests.last)
        #expect(
            patch.method == "PATCH"
                && patch.url == "https://api.truid.test/subscriber_check/v0.2/checks/\(created.checkID)")
        #expect(patch.headers.contains(HTTPHeader("Content-Type", "application/json-patch+json")))
        #expect(
            patch.body.map { String(decoding: $0, as: UTF8.self) }
                == #"[{"op":"add","path":"/code","value":"\#(code)"}]"#)
    }

    @Test func theTokenRequestUsesBasicClientCredentialsAndOnlyTheProductScope() async throws {
        let transport = FakeAPITransport()
        _ = try await fakeClient(transport).createCheck(.phoneCheck, version: .v0_2, phoneNumber: OneSubscriber.msisdn)
        let token = try #require(transport.tokenRequests.first)
        let basic = Data("cp-client:cp-secret".utf8).base64EncodedString()
        #expect(token.method == "POST" && token.url == "https://api.truid.test/oauth2/v1/token")
        #expect(token.headers.contains(HTTPHeader("Authorization", "Basic \(basic)")))
        #expect(token.headers.contains(HTTPHeader("Content-Type", "application/x-www-form-urlencoded")))
        #expect(
            token.body.map { String(decoding: $0, as: UTF8.self) } == "grant_type=client_credentials&scope=phone_check")
    }

    @Test func subscriberCheckV01IsReadWithGetAfterTheChain() async throws {
        let transport = FakeAPITransport()
        let client = fakeClient(transport)
        let created = try await client.createCheck(.subscriberCheck, version: .v0_1, phoneNumber: OneSubscriber.msisdn)
        let before = try await client.checkResult(.subscriberCheck, version: .v0_1, checkID: created.checkID)
        #expect(before.status == .accepted || before.status == .pending)
        _ = transport.openCheckURL(created.checkURL)
        let result = try await client.checkResult(.subscriberCheck, version: .v0_1, checkID: created.checkID)
        #expect(result.status == .completed && result.match == true && result.noSimChange != nil)
    }

    @Test func phoneCheckV02HasNoSimFields() async throws {
        let transport = FakeAPITransport()
        let client = fakeClient(transport)
        let created = try await client.createCheck(.phoneCheck, version: .v0_2, phoneNumber: OneSubscriber.msisdn)
        let code = try #require(JSONValue.parse(transport.openCheckURL(created.checkURL).body)?[string: "code"])
        let result = try await client.completeCheck(.phoneCheck, checkID: created.checkID, code: code)
        #expect(result.match == true && result.noSimChange == nil && result.simChangeWithin == nil)
    }

    @Test func aNumberThatIsNotTheDevicesDoesNotMatch() async throws {
        let transport = FakeAPITransport()
        let client = fakeClient(transport)
        let created = try await client.createCheck(.subscriberCheck, version: .v0_2, phoneNumber: "+447940448592")
        let code = try #require(JSONValue.parse(transport.openCheckURL(created.checkURL).body)?[string: "code"])
        let result = try await client.completeCheck(.subscriberCheck, checkID: created.checkID, code: code)
        #expect(result.status == .completed && result.match == false)
    }

    @Test func simCheckAnswersAtOnce() async throws {
        let transport = FakeAPITransport()
        let result = try await fakeClient(transport).simCheck(phoneNumber: OneSubscriber.msisdn, period: 120)
        #expect(result.status == .completed && result.noSimChange != nil)
        let request = try #require(transport.requests.last)
        #expect(request.url == "https://api.truid.test/sim_check/v0.1/checks")
        #expect(
            request.body.map { String(decoding: $0, as: UTF8.self) }
                == #"{"phone_number":"+447940448591","period":120}"#)
        #expect(transport.tokenRequests.count == 1)
    }

    @Test func aSimCheckCannotBeCreatedAsACheckWithACheckURL() async {
        let transport = FakeAPITransport()
        let error = await #expect(throws: TruAPIError.self) {
            _ = try await fakeClient(transport).createCheck(
                .simCheck, version: .v0_1, phoneNumber: OneSubscriber.msisdn)
        }
        #expect(error?.cellpathError.kind == .dataError)
        #expect(transport.requests.isEmpty)
    }

    @Test func coverageUsesTheDeviceIPsAndCountriesResourcesWithTheCoverageScope() async throws {
        let transport = FakeAPITransport()
        let client = fakeClient(transport)
        _ = try? await client.coverage(deviceIP: "100.64.23.2")
        _ = try? await client.coverage(countryCode: "GB")
        let calls = transport.requests.filter { !$0.url.hasSuffix("/token") }.map(\.url)
        #expect(
            calls == [
                "https://api.truid.test/coverage/v0.1/device_ips/100.64.23.2",
                "https://api.truid.test/coverage/v0.1/countries/GB"
            ])
        #expect(
            transport.tokenRequests.map { $0.body.map { String(decoding: $0, as: UTF8.self) } }
                == ["grant_type=client_credentials&scope=coverage"])
    }

    @Test func aPathSegmentWithSlashesOrSpacesIsRefusedBeforeAnyRequest() async {
        let transport = FakeAPITransport()
        let client = fakeClient(transport)
        for bad in ["../token", "a b", "", "x?y=1", "id%2F"] {
            let error = await #expect(throws: TruAPIError.self) {
                _ = try await client.checkResult(.phoneCheck, version: .v0_1, checkID: bad)
            }
            #expect(error?.cellpathError.kind == .dataError)
        }
        #expect(transport.requests.isEmpty)
    }

    // MARK: Tokens

    @Test func concurrentCallsWaitForOneTokenRequest() async throws {
        let transport = FakeAPITransport(tokenDelay: .milliseconds(100))
        let client = fakeClient(transport)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0 ..< 16 {
                group.addTask {
                    _ = try await client.createCheck(
                        .subscriberCheck, version: .v0_2, phoneNumber: OneSubscriber.msisdn)
                }
            }
            try await group.waitForAll()
        }
        #expect(transport.tokenRequests.count == 1)
        #expect(await client.tokenRequests == 1)
        #expect(transport.requests.count == 17)
    }

    @Test func aCallCancelledWhileItsTokenIsFetchedEndsAtOnceAndOthersGetTheToken() async throws {
        let transport = FakeAPITransport(tokenDelay: .seconds(6))
        let client = fakeClient(transport)
        let create = { @Sendable () async throws(TruAPIError) -> CreatedCheck in
            try await client.createCheck(.subscriberCheck, version: .v0_2, phoneNumber: OneSubscriber.msisdn)
        }
        let cancelled = Task { try await create() }
        let waiting = Task { try await create() }
        try await Task.sleep(for: .milliseconds(300))
        let start = ContinuousClock.now
        cancelled.cancel()
        let outcome = await cancelled.result
        // The token comes 5.7 s after the cancel: ending within half of that is ending before it,
        // with room for a loaded machine.
        #expect(ContinuousClock.now - start < .seconds(3), "the cancelled call waited for the token")
        #expect(throws: TruAPIError.self) { try outcome.get() }
        if case .failure(let error as TruAPIError) = outcome, case .transport(let failure) = error {
            #expect(failure.reason == .cancelled)
        }
        #expect(try await waiting.value.checkID.isEmpty == false, "the other caller got the token")
        #expect(transport.tokenRequests.count == 1)
        _ = try await create()
        #expect(transport.tokenRequests.count == 1, "the token was kept")
    }

    @Test func aTokenIsKeptPerScopeSetAndRefreshedUnderSixtySecondsOfValidity() async throws {
        let transport = FakeAPITransport()
        let clock = Recorder<Double>()
        clock.append(1_790_000_000)
        let client = fakeClient(transport, now: { Date().timeIntervalSince1970 + (clock.values.last! - 1_790_000_000) })
        _ = try await client.accessToken(scopes: ["subscriber_check"])
        _ = try await client.accessToken(scopes: ["subscriber_check"])
        #expect(transport.tokenRequests.count == 1)
        _ = try await client.accessToken(scopes: ["phone_check"])
        #expect(transport.tokenRequests.count == 2)
        clock.append(1_790_000_000 + 3600 - 70)  // 70 s left: still used
        _ = try await client.accessToken(scopes: ["subscriber_check"])
        #expect(transport.tokenRequests.count == 2)
        clock.append(1_790_000_000 + 3600 - 50)  // 50 s left: fetched again
        _ = try await client.accessToken(scopes: ["subscriber_check"])
        #expect(transport.tokenRequests.count == 3)
    }

    @Test func aShortLivedTokenIsFetchedForEveryCall() async throws {
        let transport = FakeAPITransport(
            configuration: FakeTruAPIConfiguration(
                clientID: FakeAPITransport.clientID,
                clientSecret: FakeAPITransport.clientSecret, tokenLifetime: 30))
        let client = fakeClient(transport)
        _ = try await client.simCheck(phoneNumber: OneSubscriber.msisdn)
        _ = try await client.simCheck(phoneNumber: OneSubscriber.msisdn)
        #expect(transport.tokenRequests.count == 2)
    }

    @Test func aRefused401TokenIsFetchedAgainOnce() async throws {
        let transport = FakeAPITransport()
        let client = fakeClient(transport)
        _ = try await client.accessToken(scopes: ["sim_check"])
        transport.script {
            $0.url.hasSuffix("/sim_check/v0.1/checks")
                ? .success(FakeAPITransport.answer(401, #"{"title":"Unauthorized"}"#)) : nil
        }
        let result = try await client.simCheck(phoneNumber: OneSubscriber.msisdn)
        #expect(result.status == .completed)
        #expect(transport.tokenRequests.count == 2)
        let bearers = transport.requests.filter { !$0.url.hasSuffix("/token") }.compactMap {
            $0.headers.first { $0.name == "Authorization" }?.value
        }
        #expect(bearers.count == 2 && bearers[0] != bearers[1])
    }

    @Test func a401AfterTheRefreshIsAConfigurationError() async {
        let transport = FakeAPITransport()
        for _ in 0 ..< 2 {
            transport.script {
                $0.url.hasSuffix("/checks") ? .success(FakeAPITransport.answer(401, #"{"title":"Unauthorized"}"#)) : nil
            }
        }
        let error = await #expect(throws: TruAPIError.self) {
            _ = try await fakeClient(transport).simCheck(phoneNumber: OneSubscriber.msisdn)
        }
        #expect(error?.cellpathError.kind == .configuration)
        #expect(transport.tokenRequests.count == 2 && transport.requests.count == 4)
    }

    @Test func wrongCredentialsAreAConfigurationErrorWithoutTheSecret() async throws {
        let transport = FakeAPITransport()
        let endpoint = TruAPIEndpoint(
            baseURL: "https://api.truid.test", clientID: "cp-client", clientSecret: "not-the-secret")
        let client = TruAPIClient(endpoint: endpoint, transport: transport, timeout: .seconds(5), pause: { _ in })
        let error = try #require(
            await #expect(throws: TruAPIError.self) { _ = try await client.accessToken(scopes: ["coverage"]) })
        guard case .upstream(let answer) = error else { Issue.record("not an upstream answer: \(error)"); return }
        #expect(answer.status == 401)
        #expect(error.cellpathError.kind == .configuration)
        #expect(transport.tokenRequests.count == 1)  // a 4xx is never retried
        let text = "\(error) \(error.cellpathError.message) \(error.cellpathError.hint ?? "")"
        #expect(!text.contains("not-the-secret"))
    }

    @Test func aFileCacheCarriesTheTokenToTheNextClient() async throws {
        let directory = try TemporaryDirectory.make("cellpath-truapi")
        defer { FileSystem.removeTree(directory) }
        let cache = FileTokenCache(path: directory + "/cellpath/tokens.json")
        let transport = FakeAPITransport()
        let token = try await fakeClient(transport, tokenCache: cache).accessToken(scopes: ["coverage"])
        let again = try await fakeClient(transport, tokenCache: cache).accessToken(scopes: ["coverage"])
        #expect(again == token && transport.tokenRequests.count == 1)
        let text = try readText(cache.path)
        #expect(text.contains(token) && !text.contains("cp-secret"))
        #expect(fileMode(cache.path) == 0o600 && fileMode(directory + "/cellpath") == 0o700)
    }

    @Test func aCacheFileOthersCanReadIsNeitherTrustedNorReplaced() async throws {
        let directory = try TemporaryDirectory.make("cellpath-truapi")
        defer { FileSystem.removeTree(directory) }
        let path = directory + "/tokens.json"
        let planted =
            #"{"https://api.truid.test cp-client coverage":{"access_token":"planted","expires_at":9999999999}}"#
        try writeText(path, planted, mode: 0o644)
        let transport = FakeAPITransport()
        let token = try await fakeClient(transport, tokenCache: FileTokenCache(path: path)).accessToken(scopes: [
            "coverage"
        ])
        #expect(token != "planted" && transport.tokenRequests.count == 1)
        #expect(try readText(path) == planted && fileMode(path) == 0o644)
    }

    @Test func aPrivateCacheFileIsTrusted() async throws {
        let directory = try TemporaryDirectory.make("cellpath-truapi")
        defer { FileSystem.removeTree(directory) }
        let path = directory + "/tokens.json"
        try writeText(
            path, #"{"https://api.truid.test cp-client coverage":{"access_token":"kept","expires_at":9999999999}}"#,
            mode: 0o600)
        let transport = FakeAPITransport()
        #expect(
            try await fakeClient(transport, tokenCache: FileTokenCache(path: path)).accessToken(scopes: ["coverage"])
                == "kept")
        #expect(transport.tokenRequests.isEmpty)
    }

    @Test func theCachePathFollowsXDG() {
        #expect(
            FileTokenCache.defaultPath(environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"]) == "/c/cellpath/tokens.json"
        )
        #expect(
            FileTokenCache.defaultPath(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/h"])
                == "/h/.cache/cellpath/tokens.json")
        #expect(FileTokenCache.defaultPath(environment: [:]) == nil)
    }

    @Test func aNamedCacheFileComesFirst() {
        let world = ["CELLPATH_TOKEN_CACHE": "/run/cellpath-sim/cp-/tokens.json", "XDG_CACHE_HOME": "/c", "HOME": "/h"]
        #expect(FileTokenCache.defaultPath(environment: world) == "/run/cellpath-sim/cp-/tokens.json")
        #expect(
            FileTokenCache.defaultPath(environment: ["CELLPATH_TOKEN_CACHE": "tokens.json", "HOME": "/h"])
                == "/h/.cache/cellpath/tokens.json")
    }
}
