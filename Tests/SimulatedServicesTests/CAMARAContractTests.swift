import CellpathCore
import Glibc
import HTTPServer
import SimulatedServices
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// The fake CAMARA operator's answers, success and error, checked against the answers CAMARA
/// Number Verification v2 and SIM Swap v2 define (`Tests/ProviderContracts/camara-answers.openapi.json`)
/// by an OpenAPI validator from PyPI (openapi-schema-validator, installed by `make provider-sdks`).
@Suite(.ownThreads) struct CAMARAContractTests {
    /// The virtual environment `make provider-sdks` makes.
    static var python: String { Repository.root + "/.build/provider-sdks/bin/python" }
    static var contracts: String { Repository.root + "/Tests/ProviderContracts" }

    /// The fake's answers to the calls cellpath makes and to the mistakes it must be told of.
    static func answers() throws -> [(method: String, path: String, response: HTTPResponse)] {
        let operator_ = FakeCAMARAOperatorTests()
        let device = try operator_.deviceToken(), client = try operator_.clientToken()
        let verify = "/number-verification/v2/verify", share = "/number-verification/v2/device-phone-number"
        let check = "/sim-swap/v2/check", date = "/sim-swap/v2/retrieve-date"
        let calls: [(String, String, String, String)] = [
            ("POST", verify, device, #"{"phoneNumber":"+447940448591"}"#),
            ("POST", verify, device, #"{"hashedPhoneNumber":"\#(String(repeating: "0", count: 64))"}"#),
            ("POST", verify, device, #"{"phoneNumber":"447940448591"}"#),
            ("POST", verify, "not-a-token", "{}"),
            ("POST", verify, client, #"{"phoneNumber":"+447940448591"}"#),
            ("GET", share, device, ""),
            ("GET", share, client, ""),
            ("POST", check, client, #"{"phoneNumber":"+447940448591"}"#),
            ("POST", check, client, #"{"phoneNumber":"+447940448591","maxAge":2401}"#),
            ("POST", check, client, "{}"),
            ("POST", check, client, #"{"phoneNumber":"+447700900999"}"#),
            ("POST", check, device, #"{"phoneNumber":"+447940448591"}"#),
            ("POST", check, "not-a-token", "{}"),
            ("POST", date, client, #"{"phoneNumber":"+447940448591"}"#),
            ("POST", date, client, #"{"phoneNumber":"+44"}"#),
            ("POST", date, device, "{}")
        ]
        return calls.map { method, path, token, body in
            (method, path, operator_.call(method, path, token: token, body))
        }
    }

    /// The validator's verdict on `answers` (written as the script reads them).
    static func validate(_ answers: [(method: String, path: String, response: HTTPResponse)]) throws -> ProcessResult {
        try #require(access(python, X_OK) == 0, "run 'make provider-sdks' first (make test does)")
        return try TemporaryDirectory.with("camara-contract") { directory in
            let recorded = JSONValue.array(
                answers.map { answer in
                    .object([
                        ("method", .string(answer.method)), ("path", .string(answer.path)),
                        ("status", .int(answer.response.status)),
                        ("content_type", .string(answer.response.headers["Content-Type"] ?? "")),
                        ("body", .string(answer.response.bodyText))
                    ])
                })
            let file = directory + "/answers.json"
            try FileSystem.write(recorded.serialized, to: file)
            return try ProcessRunner.run([
                python, contracts + "/validate_answers.py", contracts + "/camara-answers.openapi.json", file
            ])
        }
    }

    @Test func everyAnswerOfTheFakeIsOneTheAPIsDefine() throws {
        let answers = try Self.answers()
        // Both shapes are covered: answers and {status, code, message} errors of each kind.
        let statuses = Set(answers.map(\.response.status))
        #expect(statuses.isSuperset(of: [200, 400, 401, 403, 404, 422]), "\(statuses)")
        let result = try Self.validate(answers)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("\(answers.count) of \(answers.count) answers valid"), "\(result.stdout)")
    }

    /// The validator is not vacuous: answers that break the definitions are refused, each.
    @Test func answersThatBreakTheDefinitionsAreRefused() throws {
        func answer(_ status: Int, _ members: [(String, JSONValue)]) -> HTTPResponse {
            HTTPResponse(status: status, contentType: "application/json", body: JSONValue.object(members).serialized)
        }
        let broken: [(String, String, HTTPResponse)] = [
            ("POST", "/sim-swap/v2/check", answer(200, [("swapped", .string("yes"))])),
            ("POST", "/sim-swap/v2/retrieve-date", answer(200, [("latestSimChange", .string("yesterday"))])),
            ("POST", "/number-verification/v2/verify", answer(200, [("verified", .bool(true))])),
            (
                "GET", "/number-verification/v2/device-phone-number",
                answer(200, [("devicePhoneNumber", .string("447940448591"))])
            ),
            ("POST", "/sim-swap/v2/check", answer(400, [("status", .int(400)), ("code", .string("INVALID_ARGUMENT"))])),
            (
                "POST", "/sim-swap/v2/check",
                answer(422, [("status", .int(422)), ("code", .string("NOPE")), ("message", .string("m"))])
            ),
            (
                "POST", "/number-verification/v2/verify",
                answer(404, [("status", .int(404)), ("code", .string("NOT_FOUND")), ("message", .string("m"))])
            )
        ]
        let result = try Self.validate(broken.map { ($0.0, $0.1, $0.2) })
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("0 of \(broken.count) answers valid"), "\(result.stdout)")
    }
}
