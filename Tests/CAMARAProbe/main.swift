// Test helper: runs CAMARA Number Verification (`CAMARANumberVerification`) with its device leg
// through `--interface NAME --dns ADDR` (the bearer, or Wi-Fi to see the operator refuse it), the
// operator and client from CELLPATH_CAMARA_* and CELLPATH_CA_FILE, as a simulated world's
// `sim env` sets them. Prints one JSON object: {"verified": …, "device_number": …} or {"error": …}.
//   cellpath-camara-probe verify|share [PHONE] --interface NAME --dns ADDR --redirect-uri URI
//     [--hashed] [--tamper-state]
import CAMARA
import CellpathCore
import CellpathCrypto
import CellularHTTP
import FoundationEssentials
import Glibc
import SystemSupport

var args = Array(CommandLine.arguments.dropFirst())
var interface = "wwan0", dns: [String] = [], redirectURI = "", hashed = false, tamperState = false
var positional: [String] = []
while !args.isEmpty {
    let a = args.removeFirst()
    func value() -> String { args.isEmpty ? "" : args.removeFirst() }
    switch a {
    case "--interface": interface = value()
    case "--dns": dns = value().split(separator: ",").map(String.init)
    case "--redirect-uri": redirectURI = value()
    case "--hashed": hashed = true
    case "--tamper-state": tamperState = true
    default: positional.append(a)
    }
}

/// Prints `object` as one JSON line.
func emit(_ object: [(String, JSONValue)]) {
    print(JSONValue.object(object).serialized)
}

let environment = ProcessEnvironment.current()
do throws(CellpathError) {
    guard let keyFile = environment["CELLPATH_CAMARA_KEY_FILE"], let issuer = environment["CELLPATH_CAMARA_ISSUER"],
        let apiRoot = environment["CELLPATH_CAMARA_API_ROOT"], let clientID = environment["CELLPATH_CAMARA_CLIENT_ID"]
    else { throw CellpathError(.configuration, "CELLPATH_CAMARA_* is not set: run in a simulated world") }
    let key = try JWSKey(pem: (try? FileSystem.read(keyFile)) ?? [])
    let caFile = environment["CELLPATH_CA_FILE"]
    let client = CAMARAClient(
        endpoint: CAMARAEndpoint(
            apiRoot: apiRoot, issuer: issuer, clientID: clientID, authentication: .privateKeyJWT(key, keyID: nil),
            caFile: caFile),
        http: HTTPClient(route: .defaultNetwork))
    var chain = FetchRequest(url: "")
    chain.caFile = caFile
    let verification = CAMARANumberVerification(client: client, redirectURI: redirectURI, chain: chain)
    let path = try await InterfacePathProvider(interface: interface, dnsServers: dns).cellularPath()
    let cellular = CellularHTTPClient(path: path)
    let tamper = tamperState
    let leg: CAMARANumberVerification.DeviceLeg = { request in
        var report = await cellular.trace(request)
        if tamper, let stopped = report.result?.stoppedAt {
            report.result?.stoppedAt = stopped.replacing(/state=[0-9a-f]+/, with: "state=0000")
        }
        return report
    }
    do throws(CAMARAError) {
        if positional.first == "share" {
            emit([("device_number", .string(try await verification.devicePhoneNumber(over: leg)))])
        } else {
            let result = try await verification.verify(positional.last ?? "", hashed: hashed, over: leg)
            emit([
                ("verified", .bool(result.verified)), ("hops", .int(result.deviceLeg.hops.count)),
                ("interface", .string(result.deviceLeg.interfaceName))
            ])
        }
    } catch {
        var code: JSONValue = .null
        if case .authorizationRefused(let refusal, _) = error { code = .string(refusal) }
        if case .stateMismatch = error { code = .string("state_mismatch") }
        emit([
            ("error", .string(error.cellpathError(of: client.endpoint).kind.rawValue)), ("code", code),
            ("message", .string(error.cellpathError(of: client.endpoint).message))
        ])
    }
} catch {
    emit([("error", .string(error.kind.rawValue)), ("message", .string(error.message))])
}
