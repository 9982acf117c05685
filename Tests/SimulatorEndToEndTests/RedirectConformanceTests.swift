import SimulatorScenario
import CellpathCore
import Simulator
import Testing
import TestSupport

/// Issue 5 redirect conformance in the simulated world: every chain the fake API and the
/// carrier produce with their scenario faults, run by `cellpath fetch` through the bearer.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
struct RedirectConformanceTests {
    /// A world whose carrier has `faults`.
    private func withCarrier(_ faults: (inout CarrierFaults) -> Void, _ body: (SimulatedDevice) throws -> Void) throws {
        var scenario = Scenario.builtIn
        faults(&scenario.carrier)
        try SimulatedDevice.with(scenario, body)
    }

    /// The log lines written since `mark`.
    private func requests(_ device: SimulatedDevice, since mark: Int) throws -> [JSONValue] {
        Array(try device.requestLog().dropFirst(mark))
    }

    @Test func cookiesSetByTheCarrierAreCarriedToTheNextHop() throws {
        try withCarrier({ $0.requireCookies = true }) { device in
            // Control: a client without a cookie engine is refused by the carrier.
            let plain = try device.subscriberCheckURL()
            let refused = try device.curl(["-L", "-o", "/dev/null", "-w", "%{http_code}", "--interface", "wwan0",
                                           "--resolve", "api.truid.test:443:203.0.113.10",
                                           "--resolve", "mno.carrier.test:80:100.64.0.1", plain.url])
            #expect(refused.stdout == "403")

            let check = try device.subscriberCheckURL()
            let mark = try device.requestLog().count
            let fetch = try device.fetch([check.url])
            #expect(fetch.status == 0, "\(fetch.stderr)")
            #expect(fetch.json["result"]?["callback"]?["check_id"]?.string == check.id)
            let carrierHops = fetch.json.hops.filter { $0["url"]?.string?.hasPrefix("http://mno.carrier.test/") == true }
            #expect(carrierHops.count == 2)
            // The second carrier hop sent the cookies (masked in the trace).
            let cookie = carrierHops.last?["request_headers"]?.array?.first { $0["name"]?.string?.lowercased() == "cookie" }
            #expect(cookie != nil, "\(carrierHops.last.map { "\($0)" } ?? "")")
            let chain = try requests(device, since: mark)
            #expect(chain.map { $0["status"]?.int } == [302, 302, 302, 200])
            #expect(chain.allSatisfy { $0["source"]?.string == "100.64.23.10" })
        }
    }

    @Test func relativeLocationWithAQueryIsResolved() throws {
        try withCarrier({ $0.relativeLocation = true }) { device in
            let check = try device.subscriberCheckURL()
            let mark = try device.requestLog().count
            let fetch = try device.fetch([check.url])
            #expect(fetch.status == 0, "\(fetch.stderr)")
            #expect(fetch.json["result"]?["callback"]?["check_id"]?.string == check.id)
            let relative = fetch.json.hops.first { hop in
                hop["response_headers"]?.array?.contains { $0["name"]?.string == "Location" && $0["value"]?.string?.hasPrefix("\(check.id)?") == true } == true
            }
            let hop = try #require(relative, "no hop answered with a relative Location")
            let resolved = try #require(hop["location"]?.string)
            #expect(resolved.hasPrefix("http://mno.carrier.test/v1/identify/\(check.id)?return="))
            #expect(resolved.hasSuffix("&hop=1"))
            let chain = try requests(device, since: mark)
            #expect(chain.contains { $0["path"]?.string?.hasPrefix("/v1/identify/\(check.id)?return=") == true && $0["path"]?.string?.hasSuffix("&hop=1") == true })
            #expect(chain.last?["status"]?.int == 200)
        }
    }

    @Test func aChainOfExactlyTenRequestsSucceedsWithMaxHopsTen() throws {
        try withCarrier({ $0.extraHops = 7 }) { device in
            let check = try device.subscriberCheckURL()
            let mark = try device.requestLog().count
            let fetch = try device.fetch([check.url, "--max-hops", "10"])
            #expect(fetch.status == 0, "\(fetch.stderr)")
            #expect(fetch.json.hops.count == 10)
            #expect(fetch.json.hops.last?["status"]?.int == 200)
            #expect(fetch.json["result"]?["callback"]?["check_id"]?.string == check.id)
            #expect(try requests(device, since: mark).count == 10)
        }
    }

    @Test func aChainOfElevenRequestsStopsAfterTen() throws {
        try withCarrier({ $0.extraHops = 8 }) { device in
            let check = try device.subscriberCheckURL()
            let mark = try device.requestLog().count
            let fetch = try device.fetch([check.url, "--max-hops", "10"])
            #expect(fetch.status == 65, "\(fetch.stderr)")
            #expect(fetch.json.failureReason == "tooManyHops")
            #expect(fetch.json.hops.count == 10)
            #expect(fetch.json.hops.allSatisfy { $0["status"]?.int == 302 })
            #expect(try requests(device, since: mark).count == 10)
            // The same chain with one more hop allowed completes.
            let again = try device.subscriberCheckURL()
            let longer = try device.fetch([again.url, "--max-hops", "11"])
            #expect(longer.status == 0, "\(longer.stderr)")
            #expect(longer.json.hops.count == 11)
        }
    }

    @Test func aRedirectLoopIsDetected() throws {
        try withCarrier({ $0.redirectLoop = true }) { device in
            let check = try device.subscriberCheckURL()
            let mark = try device.requestLog().count
            let fetch = try device.fetch([check.url, "--max-hops", "50"])
            #expect(fetch.status == 65, "\(fetch.stderr)")
            #expect(fetch.json.failureReason == "redirectLoop")
            // Detected on the first repetition, long before the hop limit.
            let count = fetch.json.hops.count
            #expect(count >= 3 && count <= 6, "\(count) hops")
            #expect(try requests(device, since: mark).count == count)
        }
    }

    @Test func theRedirectURLEndsTheChainWithItsQuery() throws {
        try SimulatedDevice.with { device in
            let token = try device.token("subscriber_check")
            let check = try device.curlJSON(["-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                                             "-d", #"{"phone_number":"+447940448591","redirect_url":"https://app.example.test/done"}"#,
                                             "https://api.truid.test/subscriber_check/v0.2/checks"])
            let id = try #require(check["check_id"]?.string)
            let url = try #require(check["_links"]?["check_url"]?["href"]?.string)
            let mark = try device.requestLog().count
            let fetch = try device.fetch([url, "--stop-at", "https://app.example.test/", "--verbose-full"])
            #expect(fetch.status == 0, "\(fetch.stderr)")
            #expect(fetch.json.hops.count == 3)
            #expect(fetch.json.hops.last?["status"]?.int == 302)
            let stopped = try #require(fetch.json["result"]?["stopped_at"]?.string)
            #expect(stopped.hasPrefix("https://app.example.test/done?"))
            #expect(stopped.contains("check_id=\(id)"))
            let code = try #require(stopped.split(separator: "?").last?.split(separator: "&")
                .first { $0.hasPrefix("code=") }.map { String($0.dropFirst("code=".count)) })
            #expect(!code.isEmpty)
            // The redirect_url itself was never requested; the code completes the check.
            #expect(try device.requestLog().count == mark + 3)
            let patched = try device.curlJSON(["-X", "PATCH", "-H", "Authorization: Bearer \(token)",
                                               "-H", "Content-Type: application/json-patch+json",
                                               "-d", #"[{"op":"add","path":"/code","value":"\#(code)"}]"#,
                                               "https://api.truid.test/subscriber_check/v0.2/checks/\(id)"])
            #expect(patched["match"]?.bool == true)
        }
    }

    @Test func anUntrustedCertificateIsATLSFailure() throws {
        try SimulatedDevice.with { device in
            let check = try device.subscriberCheckURL()
            let mark = try device.requestLog().count
            // The system trust store only: the world's test CA is not in it.
            let (fetch, packets) = try device.capture(on: ["wlan0"]) {
                try device.fetch([check.url, "--cacert", "/etc/ssl/certs/ca-certificates.crt"])
            }
            #expect(fetch.status == 69, "\(fetch.stderr)")
            #expect(fetch.json.failureReason == "tlsFailure")
            #expect(packets["wlan0"] == [], "\(packets)")
            #expect(try device.requestLog().count == mark)
        }
    }

    @Test func anHTTPSToHTTPDowngradeIsReportedAndRefusedWhenStrict() throws {
        try withCarrier({ $0.httpsDowngrade = true }) { device in
            let check = try device.subscriberCheckURL()
            let lax = try device.fetch([check.url])
            #expect(lax.status == 0, "\(lax.stderr)")
            let hops = lax.json.hops
            #expect(hops.count == 3)
            // The way back to the API is plain http, without TLS, and reported as a downgrade.
            let back = try #require(hops.last)
            #expect(back["url"]?.string?.hasPrefix("http://api.truid.test/") == true)
            #expect(back["remote_port"]?.int == 80 && back["tls_version"] == nil)
            #expect(back["downgrade"]?.bool == true)
            #expect(hops.first?["downgrade"]?.bool == false)

            let strict = try device.subscriberCheckURL()
            let mark = try device.requestLog().count
            let refused = try device.fetch([strict.url, "--strict"])
            #expect(refused.status == 65, "\(refused.stderr)")
            #expect(refused.json.failureReason == "downgradeRefused")
            // Nothing was sent to the API over plain http.
            let sent = try requests(device, since: mark)
            #expect(!sent.contains { $0["namespace"]?.string == device.prefix + "inet" && $0["path"]?.string?.contains("/callback") == true })
        }
    }
}
