import CellpathCore
import HTTPServer
import SimulatorScenario
import SystemSupport

extension FakeTruAPI {
    /// Coverage answers may be read by any web origin, as the published definitions say.
    static let anyOrigin: HTTPHeaders = ["Access-Control-Allow-Origin": "*"]

    /// The products of the coverage answers: id and name.
    static let coveredProducts = [("PCK", "Phone Check"), ("SUK", "Subscriber Check"), ("SCK", "SIM Check")]

    /// `GET /coverage/v0.1/device_ips/{ip}` (and `device_ip[/{ip}]`): the mobile network that
    /// `address` belongs to and the products available on it; 400 for an address that is not
    /// numeric, 412 `not_mobile_ip` when it is not a mobile address.
    func coverage(address: String) -> HTTPResponse {
        guard IPAddress.isNumeric(address) else {
            return ProblemDetails.badRequest("ip must be an IPv4 or IPv6 address")
        }
        guard let network = directory.network(holding: address) else { return ProblemDetails.notMobileIP() }
        let msisdn = directory.subscriber(holding: address)?.msisdn
        let products: [JSONValue] = Self.coveredProducts.map {
            .object([("product_id", .string($0.0)), ("product_name", .string($0.1))])
        }
        return .json(
            200,
            .object([
                ("network_id", .string(network.mcc + network.mnc)),
                ("network_name", .string(network.operatorName)),
                ("country_code", .string(Self.countryCode(of: network, msisdn: msisdn))),
                ("network_aliases", .array([])),
                ("mobile_data_ip", .string(address)),
                ("products", .array(products))
            ]), contentType: "application/hal+json", headers: Self.anyOrigin)
    }

    /// `GET /coverage/v0.1/countries/{code}`, `code` an ISO 3166 alpha-2 code or a dialing code:
    /// the world's operators in that country, per product; 404 when the world has none there.
    func countryCoverage(_ code: String) -> HTTPResponse {
        let wanted = code.uppercased()
        var networks: [SimulatedNetwork] = []
        var country: String?
        for modem in configuration.modems where !networks.contains(where: { $0.operatorID == modem.network.operatorID })
        {
            let modemCountry = Self.countryCode(of: modem.network, msisdn: modem.sim?.msisdn)
            guard modemCountry == wanted || Self.dialingCodes[modemCountry].map(String.init) == wanted else { continue }
            networks.append(modem.network)
            country = country ?? modemCountry
        }
        guard let country else {
            return ProblemDetails.response(404, "not_found", "Not Found", "No coverage for country \(code)")
        }
        let networkList: [JSONValue] = networks.map {
            .object([
                ("network_id", .string($0.mcc + $0.mnc)), ("network_name", .string($0.operatorName)),
                ("network_aliases", .array([]))
            ])
        }
        let products: [JSONValue] = Self.coveredProducts.map {
            .object([
                ("product_id", .string($0.0)), ("product_name", .string($0.1)), ("coverage", .string("FULL")),
                ("networks", .array(networkList))
            ])
        }
        var members: [(String, JSONValue)] = [("country_code", .string(country))]
        if let dialing = Self.dialingCodes[country] { members.append(("dialing_code", .int(dialing))) }
        members += [
            ("products", .array(products)),
            (
                "_links",
                .object([
                    ("self", .object([("href", .string(configuration.baseURL + "/coverage/v0.1/countries/\(code)"))]))
                ])
            )
        ]
        return .json(200, .object(members), contentType: "application/hal+json", headers: Self.anyOrigin)
    }

    /// The ISO 3166 country of `network`: from its mobile country code for the common cases; for
    /// the ITU test network 001 (the default world's) and other codes, the country of the SIM's
    /// number when one is known; `ZZ` (unknown) otherwise.
    static func countryCode(of network: SimulatedNetwork, msisdn: String?) -> String {
        let byMCC = countryCode(mcc: network.mcc)
        guard byMCC == "ZZ", let msisdn else { return byMCC }
        let digits = msisdn.hasPrefix("+") ? msisdn.dropFirst() : Substring(msisdn)
        let matching = countryDialingCodes.filter { digits.hasPrefix(String($0.code)) }
        return matching.first { String($0.code).count == matching.map { String($0.code).count }.max() }?.country ?? "ZZ"
    }

    /// ISO 3166 country of a mobile country code for the common cases; `ZZ` (unknown) for others,
    /// including the ITU test network 001.
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

    /// The dialing codes of the countries `countryCode(mcc:)` knows; for a shared code, the
    /// country a number is taken to be in comes first (+1: US).
    static let countryDialingCodes: [(country: String, code: Int)] = [
        ("GB", 44), ("US", 1), ("CA", 1), ("DE", 49), ("FR", 33), ("IT", 39), ("ES", 34), ("NL", 31), ("IN", 91),
        ("AU", 61)
    ]
    static let dialingCodes = Dictionary(uniqueKeysWithValues: countryDialingCodes.map { ($0.country, $0.code) })
}
