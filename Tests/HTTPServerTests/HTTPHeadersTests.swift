import HTTPServer
import Testing

@Suite struct HTTPHeadersTests {
    @Test func lookupIsCaseInsensitiveAndKeepsRepeats() {
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        headers.add("Set-Cookie", "a=1")
        headers.add("set-cookie", "b=2")
        #expect(headers["content-type"] == "application/json")
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        headers.set("Set-Cookie", "c=3")
        #expect(headers.values(for: "set-cookie") == ["c=3"])
        headers.remove("CONTENT-TYPE")
        #expect(headers["Content-Type"] == nil)
    }

    @Test func redirectSetsLocationAndStatus() {
        let response = HTTPResponse.redirect("/next?a=1", status: 307)
        #expect(response.status == 307)
        #expect(response.headers["location"] == "/next?a=1")
    }

    @Test func listeningOnAnInvalidAddressFails() {
        #expect(throws: (any Error).self) {
            _ = try HTTPServer(listener: .address("not-an-address", port: 0)) { _ in HTTPResponse(status: 200) }
        }
    }
}
