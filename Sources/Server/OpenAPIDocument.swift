/// The OpenAPI 3 description of serve's routes (`GET /openapi.json`, also in docs/serve.md).
enum OpenAPIDocument {
    private static func operation(_ summary: String, _ parameters: [String] = [], body: [String] = []) -> String {
        let query = parameters.map { #"{"name":"\#($0)","in":"query","schema":{"type":"string"}}"# }.joined(
            separator: ",")
        let properties = body.map { #""\#($0)":{"type":"string"}"# }.joined(separator: ",")
        let requestBody =
            body.isEmpty
            ? ""
            : #","requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{\#(properties)}}},"application/x-www-form-urlencoded":{"schema":{"type":"object","properties":{\#(properties)}}}}}"#
        return
            #"{"summary":"\#(summary)","parameters":[\#(query)]\#(requestBody),"responses":{"200":{"description":"OK"},"400":{"description":"{error_message}"},"501":{"description":"{error_message}: the provider serve answers with (serve --provider) does not serve this route"}}}"#
    }

    private static let create = operation("Create a check", body: ["phone_number"])
    private static let createV2 = operation("Create a v0.2 check", body: ["phone_number", "redirect_url"])
    private static let result = operation("The check's result", ["check_id"])
    private static let exchange = operation(
        "Complete a v0.2 check with its code", ["code", "check_id"], body: ["code", "check_id"])

    private static let webhook = operation(
        "A tru.ID webhook, its HTTP signature verified against the API's JWK Set (400 when it does not verify)")

    /// path → operations by method.
    private static let paths: [(String, String)] = [
        ("/check", #"{"post":\#(create)}"#),
        ("/check_status", #"{"get":\#(result)}"#),
        ("/phone-check", #"{"post":\#(create),"get":\#(result)}"#),
        ("/v0.1/phone-check", #"{"post":\#(create),"get":\#(result)}"#),
        ("/subscriber-check", #"{"post":\#(create),"get":\#(result)}"#),
        (
            "/subscriber-check/{check_id}",
            #"{"get":{"summary":"The check's result","parameters":[{"name":"check_id","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"OK"}}}}"#
        ),
        ("/v0.1/subscriber-check", #"{"post":\#(create),"get":\#(result)}"#),
        ("/sim-check", #"{"post":\#(create)}"#),
        ("/v0.1/sim-check", #"{"post":\#(create)}"#),
        ("/v0.2/phone-check", #"{"post":\#(createV2),"get":\#(result)}"#),
        ("/v0.2/subscriber-check", #"{"post":\#(createV2),"get":\#(result)}"#),
        ("/v0.2/phone-check/exchange-code", #"{"get":\#(exchange),"post":\#(exchange)}"#),
        ("/v0.2/subscriber-check/exchange-code", #"{"get":\#(exchange),"post":\#(exchange)}"#),
        (
            "/coverage-access-token",
            #"{"get":\#(operation("A coverage-scoped token and the device_ip URL (only with serve --coverage-token-route; 404 otherwise)"))}"#
        ),
        ("/country", #"{"get":\#(operation("Coverage of a country", ["country_code"]))}"#),
        ("/device", #"{"get":\#(operation("Coverage of a device address", ["ip_address"]))}"#),
        ("/callback", #"{"post":\#(webhook)}"#),
        ("/phone-check/callback", #"{"post":\#(webhook)}"#),
        ("/v0.1/phone-check/callback", #"{"post":\#(webhook)}"#),
        ("/traces", #"{"post":\#(operation("A device trace, logged"))}"#),
        ("/v0.1/traces", #"{"post":\#(operation("A device trace, logged"))}"#),
        ("/v0.2/traces", #"{"post":\#(operation("A device trace, logged"))}"#),
        ("/healthz", #"{"get":\#(operation("Health and the upstream token state"))}"#),
        ("/metrics", #"{"get":\#(operation("Prometheus metrics"))}"#),
        ("/openapi.json", #"{"get":\#(operation("This document"))}"#)
    ]

    static let json: String = {
        let body = paths.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",")
        return #"{"openapi":"3.0.3","info":{"title":"cellpath serve","version":"1"},"paths":{\#(body)}}"#
    }()
}
