import CellpathCore
import HTTPServer

extension FakeTruAPI {
    /// `GET /coverage/v0.1/device_ip[/{ip}]`: the mobile network that `address` belongs to
    /// and the products available on it; 412 `not_mobile_ip` when it is not a mobile address.
    func coverage(_ request: HTTPRequest, address: String) -> HTTPResponse {
        guard let network = directory.network(holding: address) else { return ProblemDetails.notMobileIP() }
        let products: [JSONValue] = [("PCK", "Phone Check"), ("SUK", "Subscriber Check"), ("SCK", "SIM Check")].map {
            .object([("product_id", .string($0.0)), ("product_name", .string($0.1))])
        }
        return .json(200, .object([
            ("network_id", .string(network.mcc + network.mnc)),
            ("network_name", .string(network.operatorName)),
            ("country_code", .string(FakeTruAPI.countryCode(mcc: network.mcc))),
            ("network_aliases", .array([])),
            ("mobile_data_ip", .string(address)),
            ("products", .array(products)),
        ]))
    }

    /// ISO 3166 country of a mobile country code for the common cases; `ZZ` (unknown) for
    /// others, including the ITU test network 001.
    static func countryCode(mcc: String) -> String {
        switch mcc {
        case "234", "235": "GB"
        case "310", "311", "312", "313", "314", "315", "316": "US"
        case "262": "DE"
        case "208": "FR"
        case "222": "IT"
        case "214": "ES"
        case "204": "NL"
        case "404", "405": "IN"
        case "505": "AU"
        case "302": "CA"
        default: "ZZ"
        }
    }
}
