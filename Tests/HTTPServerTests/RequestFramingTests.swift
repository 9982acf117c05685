import Testing

@testable import HTTPServer

/// The framing rules on header fields alone, as libmicrohttpd hands them over.
struct RequestFramingTests {
    private func problem(_ fields: [(String, String)], version: String = "HTTP/1.1") -> String? {
        RequestFraming.problem(version: version, headers: fields.map { (name: $0.0, value: $0.1) })
    }

    @Test func soundFramingPasses() {
        #expect(problem([("Host", "x")]) == nil)
        #expect(problem([("host", "x"), ("content-length", " 12 ")]) == nil)
        #expect(problem([("Host", "x"), ("Transfer-Encoding", "Chunked")]) == nil)
        #expect(problem([], version: "HTTP/1.0") == nil, "HTTP/1.0 needs no Host")
    }

    @Test func ambiguousFramingIsNamed() {
        #expect(
            problem([("Host", "x"), ("Content-Length", "5"), ("content-length", "5")]) == "more than one Content-Length"
        )
        #expect(problem([("Host", "x"), ("Content-Length", "-5")]) == "Content-Length is not a number")
        #expect(problem([("Host", "x"), ("Content-Length", "")]) == "Content-Length is not a number")
        #expect(
            problem([("Host", "x"), ("Content-Length", "5"), ("Transfer-Encoding", "chunked")])
                == "both Content-Length and Transfer-Encoding")
        #expect(
            problem([("Host", "x"), ("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")])
                == "a Transfer-Encoding other than chunked")
        #expect(problem([("Host", "x"), ("Transfer-Encoding", "identity")]) == "a Transfer-Encoding other than chunked")
        #expect(
            problem([("Host", "x"), ("Transfer-Encoding ", "chunked")])
                == "a header name that is not a token (a space before the colon?)")
        #expect(
            problem([("Host", "x"), ("X\u{1}", "y")]) == "a header name that is not a token (a space before the colon?)"
        )
        #expect(problem([]) == "no Host")
        #expect(problem([("Host", "x"), ("Host", "y")], version: "HTTP/1.0") == "more than one Host")
    }
}
