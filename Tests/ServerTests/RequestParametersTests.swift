import HTTPServer
import Testing

@testable import Server

/// Reading dev-server parameters from JSON, form bodies and the query.
struct RequestParametersTests {
    @Test func jsonFormAndQueryAreRead() throws {
        let json = try RequestParameters(
            HTTPRequest(
                method: "POST", path: "/x", headers: ["Content-Type": "application/json"],
                body: Array(#"{"phone_number":"+447940448591"}"#.utf8)), allowsForm: false)
        #expect(try json.required("phone_number") == "+447940448591")
        let form = try RequestParameters(
            HTTPRequest(
                method: "POST", path: "/x", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array("phone_number=%2B44+7940&x=1".utf8)), allowsForm: true)
        #expect(try form.required("phone_number") == "+44 7940")
        let query = try RequestParameters(
            HTTPRequest(method: "GET", path: "/x", queryItems: [HTTPQueryItem(name: "check_id", value: "c1")]),
            allowsForm: false)
        #expect(try query.required("check_id") == "c1")
    }

    @Test func badValuesAre400WithTheParameterNamed() {
        func status(_ body: String, _ type: String = "application/json", allowsForm: Bool = true) -> (Int, String)? {
            do {
                _ = try RequestParameters(
                    HTTPRequest(method: "POST", path: "/x", headers: ["Content-Type": type], body: Array(body.utf8)),
                    allowsForm: allowsForm
                )
                .required("phone_number")
                return nil
            } catch {
                return (error.status, error.message)
            }
        }
        #expect(status("{}")! == (400, "phone_number parameter is required"))
        #expect(status(#"{"phone_number":""}"#)! == (400, "phone_number parameter is required"))
        #expect(status(#"{"phone_number":447940448591}"#)! == (400, "phone_number parameter must be a string"))
        #expect(status(#"{"phone_number":"+44\r\nX: y"}"#)! == (400, "phone_number parameter is not valid"))
        #expect(status(#"{"phone_number":"+44\u0000"}"#)! == (400, "phone_number parameter is not valid"))
        #expect(status("[1]")! == (400, "the body is not a JSON object"))
        #expect(status("phone_number=%zz", "application/x-www-form-urlencoded")! == (400, "the form body is not valid"))
        #expect(status("x", "text/plain")!.0 == 415)
        // JSON sent with another type (curl -d sends a form's): said so, never read as a form.
        let hint = "the body looks like JSON: send it with Content-Type: application/json"
        #expect(status(#"{"phone_number":"+447940448591"}"#, "application/x-www-form-urlencoded")! == (400, hint))
        #expect(
            status(#" {"phone_number":"+447940448591"}"#, "application/x-www-form-urlencoded", allowsForm: false)! == (
                415, hint
            ))
        #expect(status(#"{"phone_number":"+447940448591"}"#, "text/plain")! == (415, hint))
    }

    /// The bodies a web page can send without a CORS preflight are not read as parameters:
    /// forms unless allowed, and text whose type merely mentions JSON.
    @Test func bodiesAWebPageSendsFreelyAreRefused() {
        func status(_ type: String, _ body: String, allowsForm: Bool) -> Int? {
            do {
                _ = try RequestParameters(
                    HTTPRequest(method: "POST", path: "/x", headers: ["Content-Type": type], body: Array(body.utf8)),
                    allowsForm: allowsForm
                ).required("phone_number")
                return nil
            } catch {
                return error.status
            }
        }
        #expect(status("application/x-www-form-urlencoded", "phone_number=%2B447940448591", allowsForm: false) == 415)
        #expect(
            status("application/x-www-form-urlencoded; charset=utf-8", "phone_number=%2B447940448591", allowsForm: true)
                == nil)
        #expect(status("text/plain; x=json", #"{"phone_number":"+447940448591"}"#, allowsForm: true) == 415)
        #expect(
            status("application/json; charset=utf-8", #"{"phone_number":"+447940448591"}"#, allowsForm: false) == nil)
        #expect(status("application/merge-patch+json", #"{"phone_number":"+447940448591"}"#, allowsForm: false) == nil)
    }

    /// Found by the `serve-request` fuzz target (docs/fuzzing.md): an escape whose two
    /// characters are a sign and a digit was decoded as a number ("%-0" as NUL).
    @Test func anEscapeNeedsTwoHexDigits() {
        #expect(RequestParameters.formFields(Array("phone_number=%+f".utf8)) == nil)
        #expect(RequestParameters.formFields(Array("x=%-0".utf8)) == nil)
        #expect(RequestParameters.formFields(Array("x=%2b%2B".utf8))?.map { "\($0.0)=\($0.1)" } == ["x=++"])
    }
}
