import CellpathCore
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// The product flows driven by curl inside the device namespace, as docs/simulator-api.md does by
/// hand: backend legs over Wi-Fi, the device leg through wwan0 (match) or Wi-Fi (the real
/// API's failure). SubscriberCheck v0.2 has its own walk-through in SimulatorTests.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ProductFlowTests {
    /// Opens `url` with curl -L, through the bearer (names pinned) or through Wi-Fi;
    /// returns the final status and body.
    private func open(
        _ device: SimulatedDevice, _ url: String, throughBearer: Bool
    ) throws -> (status: Int, body: String) {
        let bearer =
            throughBearer
            ? [
                "--interface", "wwan0", "--resolve", "api.truid.test:443:203.0.113.10",
                "--resolve", "mno.carrier.test:80:100.64.0.1"
            ] : []
        let result = try device.curl(["-L", "-w", "\n%{http_code}"] + bearer + [url])
        #expect(result.status == 0, "curl \(url): \(result.stderr)")
        let body = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(body.last ?? "") ?? 0, body.dropLast().joined(separator: "\n"))
    }

    /// GET an API resource over Wi-Fi with `token`.
    private func get(_ device: SimulatedDevice, _ path: String, token: String) throws -> JSONValue {
        try device.curlJSON(["-H", "Authorization: Bearer \(token)", "https://api.truid.test/\(path)"])
    }

    /// PATCH the v0.2 code over Wi-Fi.
    private func patchCode(
        _ device: SimulatedDevice, _ product: String, _ id: String, code: String, token: String
    ) throws -> JSONValue {
        try device.curlJSON([
            "-X", "PATCH", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json-patch+json",
            "-d", #"[{"op":"add","path":"/code","value":"\#(code)"}]"#,
            "https://api.truid.test/\(product)/checks/\(id)"
        ])
    }

    /// The 412 not_mobile_ip answer to a check_url opened through Wi-Fi, and the check's ERROR.
    private func expectRefusedThroughWiFi(_ device: SimulatedDevice, _ product: String, token: String) throws {
        let check = try device.createCheck(product, token: token)
        let answer = try open(device, check.url, throughBearer: false)
        #expect(answer.status == 412)
        #expect(try JSONValue.parse(answer.body)["type"]?.string?.hasSuffix("#not_mobile_ip") == true)
        let after = try get(device, "\(product)/checks/\(check.id)", token: token)
        #expect(after["status"]?.string == "ERROR")
        #expect(after["error_code"]?.string == "not_mobile_ip")
    }

    @Test func subscriberCheckV01() throws {
        try SimulatedDevice.with { device in
            let token = try device.token("subscriber_check")
            try expectRefusedThroughWiFi(device, "subscriber_check/v0.1", token: token)
            let check = try device.createCheck("subscriber_check/v0.1", token: token)
            let chain = try open(device, check.url, throughBearer: true)
            #expect(chain.status == 200)
            #expect(try JSONValue.parse(chain.body)["check_id"]?.string == check.id)
            let result = try get(device, "subscriber_check/v0.1/checks/\(check.id)", token: token)
            #expect(result["status"]?.string == "COMPLETED")
            #expect(result["match"]?.bool == true)
            #expect(result["no_sim_change"]?.bool == true)
        }
    }

    @Test func phoneCheckV01AndV02() throws {
        try SimulatedDevice.with { device in
            let token = try device.token("phone_check")
            try expectRefusedThroughWiFi(device, "phone_check/v0.1", token: token)
            try expectRefusedThroughWiFi(device, "phone_check/v0.2", token: token)

            let v1 = try device.createCheck("phone_check/v0.1", token: token)
            #expect(try open(device, v1.url, throughBearer: true).status == 200)
            let v1Result = try get(device, "phone_check/v0.1/checks/\(v1.id)", token: token)
            #expect(v1Result["status"]?.string == "COMPLETED")
            #expect(v1Result["match"]?.bool == true)
            #expect(v1Result["no_sim_change"] == nil)

            let v2 = try device.createCheck("phone_check/v0.2", token: token)
            let chain = try open(device, v2.url, throughBearer: true)
            #expect(chain.status == 200)
            let code = try #require(try JSONValue.parse(chain.body)["code"]?.string)
            let v2Result = try patchCode(device, "phone_check/v0.2", v2.id, code: code, token: token)
            #expect(v2Result["status"]?.string == "COMPLETED")
            #expect(v2Result["match"]?.bool == true)
            #expect(v2Result["no_sim_change"] == nil)
        }
    }

    @Test func simCheck() throws {
        try SimulatedDevice.with(connect: false) { device in
            let token = try device.token("sim_check")
            let check = try device.curlJSON([
                "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                "-d", #"{"phone_number":"+447940448591"}"#, "https://api.truid.test/sim_check/v0.1/checks"
            ])
            #expect(check["status"]?.string == "COMPLETED")
            #expect(check["no_sim_change"]?.bool == true)
            let id = try #require(check["check_id"]?.string)
            #expect(try get(device, "sim_check/v0.1/checks/\(id)", token: token)["no_sim_change"]?.bool == true)
            let unknown = try device.curlJSON([
                "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                "-d", #"{"phone_number":"+447700900123"}"#, "https://api.truid.test/sim_check/v0.1/checks"
            ])
            #expect(unknown["status"]?.string == "ERROR")
            #expect(unknown["error_code"]?.string == "mno_user_not_found")
        }
    }

    @Test func coverageOfTheDeviceAddress() throws {
        try SimulatedDevice.with { device in
            let token = try device.token("coverage")
            let through = try device.curl([
                "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(token)", "--interface", "wwan0",
                "--resolve", "api.truid.test:443:203.0.113.10", "https://api.truid.test/coverage/v0.1/device_ip"
            ])
            let lines = through.stdout.split(separator: "\n")
            #expect(lines.last == "200")
            let coverage = try JSONValue.parse(String(lines.first ?? ""))
            #expect(coverage["network_id"]?.string == "00101")
            #expect(coverage["network_name"]?.string == "cellpath sim")
            #expect(coverage["mobile_data_ip"]?.string == "100.64.23.10")
            let products = Set((coverage["products"]?.array ?? []).compactMap { $0["product_id"]?.string })
            #expect(products.isSuperset(of: ["SUK", "PCK", "SCK"]), "\(products)")

            let wifi = try device.curl([
                "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)",
                "https://api.truid.test/coverage/v0.1/device_ip"
            ])
            #expect(wifi.stdout == "412")
        }
    }

    @Test func anotherNumberDoesNotMatchAndARecentSIMSwapIsReported() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].sim?.simChangedMinutesAgo = 30
        try SimulatedDevice.with(scenario) { device in
            let token = try device.token("subscriber_check+sim_check")
            func subscriberCheck(_ number: String) throws -> JSONValue {
                let check = try device.createCheck("subscriber_check/v0.2", token: token, number: number)
                let chain = try open(device, check.url, throughBearer: true)
                #expect(chain.status == 200)
                let code = try #require(try JSONValue.parse(chain.body)["code"]?.string)
                return try patchCode(device, "subscriber_check/v0.2", check.id, code: code, token: token)
            }
            let other = try subscriberCheck("+447940448592")
            #expect(other["status"]?.string == "COMPLETED")
            #expect(other["match"]?.bool == false)

            let own = try subscriberCheck("+447940448591")
            #expect(own["match"]?.bool == true)
            #expect(own["no_sim_change"]?.bool == false)
            #expect(own["sim_change_within"]?.int == 60)

            let sim = try device.curlJSON([
                "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                "-d", #"{"phone_number":"+447940448591"}"#, "https://api.truid.test/sim_check/v0.1/checks"
            ])
            #expect(sim["no_sim_change"]?.bool == false)
            #expect(sim["sim_change_within"]?.int == 60)
        }
    }
}
