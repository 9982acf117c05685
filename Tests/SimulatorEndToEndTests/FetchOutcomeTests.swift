import CellpathCore
import TestSupport
import Testing

/// What `cellpath fetch` tells a script and a person about a check_url, against the fake API's
/// real chain: the exit code follows the answer, the code is there to hand on, a redirect_url
/// ends the chain, and -q / -v / a terminal change what is printed.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct FetchOutcomeTests {
    static let bearer = ["fetch", "--interface", "wwan0", "--dns", "100.64.0.53"]

    /// PATCHes `code` to the check over Wi-Fi (the backend's leg) and returns the check.
    private func exchange(_ device: SimulatedDevice, _ id: String, code: String, token: String) throws -> JSONValue {
        try device.curlJSON([
            "-X", "PATCH", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json-patch+json",
            "-d", #"[{"op":"add","path":"/code","value":"\#(code)"}]"#,
            "https://api.truid.test/subscriber_check/v0.2/checks/\(id)"
        ])
    }

    @Test func theCodeReachesScriptsAndTheExitCodeFollowsTheAnswer() throws {
        try SimulatedDevice.with { device in
            let token = try device.token("subscriber_check")
            // --json: the callback with the code itself; the trace keeps it masked.
            let check = try device.createCheck("subscriber_check/v0.2", token: token)
            let first = try device.fetch([check.url])
            #expect(first.status == 0, "\(first.stderr)")
            let callback = try #require(first.json["result"]?["callback"])
            #expect(callback["check_id"] == .string(check.id))
            let code = try #require(callback["code"]?.stringValue)
            #expect(code.count == 32 && first.json["result"]?["json"]?["code"] == .string("[redacted]"))
            #expect(first.json["warnings"] == .array([]) && first.json["error"] == nil)
            #expect(try exchange(device, check.id, code: code, token: token)["match"] == .bool(true))

            // The same check_url again: 409, a failure of its own, with the problem's text.
            let again = try device.fetch([check.url])
            #expect(again.status == 65)
            #expect(again.json["error"]?["reason"] == .string("checkAlreadyProcessed"))
            #expect(again.json["error"]?["status"] == .int(409) && again.json["error"]?["hop"] == .int(1))
            #expect(again.json["error"]?["problem"]?["detail"] == .string("Check has already been processed"))
            #expect(again.json["result"]?["callback"] == .null && again.json["hops"]?.arrayValue?.count == 1)
            #expect(again.stderr.contains("error: the check was already processed (409)"), "\(again.stderr)")

            // --print code: the code alone on stdout, good for the exchange.
            let printed = try device.createCheck("subscriber_check/v0.2", token: token)
            let only = try device.cellpath(Self.bearer + ["--print", "code", printed.url])
            #expect(only.status == 0, "\(only.stderr)")
            let printedCode = String(only.stdout.filter { $0 != "\n" })
            #expect(printedCode.count == 32 && !only.stdout.contains("[hop"))
            #expect(try exchange(device, printed.id, code: printedCode, token: token)["match"] == .bool(true))

            // wlan0 is no modem's interface: refused before any packet (the check stays unopened).
            let wifi = try device.createCheck("subscriber_check/v0.2", token: token)
            let notModem = try device.cellpath(["fetch", "--interface", "wlan0", "--dns", "192.0.2.1", wifi.url])
            #expect(notModem.status == 64)
            #expect(
                notModem.stderr.hasPrefix(
                    "Error: 'wlan0' is not a modem's network interface: the modems' are wwan0 (cdc-wdm0, MBIM)"),
                "\(notModem.stderr)")
            let state = try device.curlJSON([
                "-H", "Authorization: Bearer \(token)", "https://api.truid.test/subscriber_check/v0.2/checks/\(wifi.id)"
            ])
            #expect(state["status"] == .string("ACCEPTED"))

            // Through Wi-Fi anyway: the API answers 412 not_mobile_ip, and fetch says so.
            let refused = try device.cellpath([
                "fetch", "--interface", "wlan0", "--allow-any-interface", "--dns", "192.0.2.1", wifi.url
            ])
            #expect(refused.status == 69)
            #expect(
                refused.stderr.contains("did not come from a mobile network (412 not_mobile_ip)"), "\(refused.stderr)")
            #expect(refused.stdout.contains("[fetch] 412 Precondition Failed: Not a mobile IP"), "\(refused.stdout)")
        }
    }

    @Test func theChainEndsAtTheRedirectURLWithTheResult() throws {
        try SimulatedDevice.with { device in
            let token = try device.token("subscriber_check")
            let check = try device.curlJSON([
                "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                "-d", #"{"phone_number":"+447940448591","redirect_url":"https://app.example.test/done"}"#,
                "https://api.truid.test/subscriber_check/v0.2/checks"
            ])
            let id = try #require(check["check_id"]?.stringValue)
            let url = try #require(check["_links"]?["check_url"]?["href"]?.stringValue)
            let fetched = try device.fetch([url])
            #expect(fetched.status == 0, "\(fetched.stderr)")
            // The app's own URL is not requested: the chain stops with the result in its query.
            #expect(fetched.json["hops"]?.arrayValue?.count == 3)
            #expect(
                fetched.json["result"]?["stopped_at"]?.stringValue?.hasPrefix(
                    "https://app.example.test/done?check_id=\(id)&code=[redacted]") == true)
            let code = try #require(fetched.json["result"]?["callback"]?["code"]?.stringValue)
            #expect(try exchange(device, id, code: code, token: token)["match"] == .bool(true))
        }
    }

    @Test func quietVerboseAndATerminalPrintWhatTheySay() throws {
        try SimulatedDevice.with { device in
            let token = try device.token("subscriber_check")
            func run(_ options: [String]) throws -> ProcessResult {
                let check = try device.createCheck("subscriber_check/v0.2", token: token)
                let result = try device.cellpath(Self.bearer + options + [check.url])
                #expect(result.status == 0, "\(options): \(result.stderr)")
                return result
            }
            // The hops are details, on stderr; the chain's end is the result, on stdout.
            let normal = try run([])
            #expect(
                normal.stderr.contains("[hop 1] GET https://api.truid.test/") && !normal.stdout.contains("[hop"),
                "\(normal.stdout)")
            #expect(normal.stdout.contains("[fetch] check_id="))
            #expect(!normal.stderr.contains("debug:"))

            let quiet = try run(["-q"])
            #expect(quiet.stdout.contains("[fetch] check_id="), "\(quiet.stdout)")
            #expect(
                quiet.stdout.split(separator: "\n").count == normal.stdout.split(separator: "\n").count,
                "\(quiet.stdout)")
            #expect(quiet.stderr == "")

            let verbose = try run(["-v"])
            for detail in [
                "debug: [hop 1] GET https://api.truid.test/", "debug: [hop 1] DNS answers 203.0.113.10",
                "bound to wwan0 (SO_BINDTODEVICE read back)", "debug: [hop 2] status 302: connect",
                "assertion=[redacted]"
            ] {
                #expect(verbose.stderr.contains(detail), "\(detail) missing: \(verbose.stderr)")
            }
            #expect(!verbose.stderr.contains("code=") || verbose.stderr.contains("code=[redacted]"))

            // On a terminal the progress line counts its time: redrawn with \r while the chain runs.
            let check = try device.createCheck("subscriber_check/v0.2", token: token)
            let command = ([CellpathBinary.path] + Self.bearer + [check.url]).map { "'\($0)'" }.joined(separator: " ")
            let terminal = try device.run(["script", "-qec", command, "/dev/null"])
            #expect(terminal.status == 0, "\(terminal.stdout)")
            let redraws = terminal.stdout.split(separator: "\r[", omittingEmptySubsequences: false).count - 1
            #expect(
                redraws >= 2 && terminal.stdout.contains("s] fetching through wwan0"), "\(redraws): \(terminal.stdout)")
        }
    }
}
