import CAMARA
import CellpathCore
import Workflow

/// The provider whose API answers serve's product routes: tru.ID's (every route), a
/// silent-auth provider's (Twilio SNA, Vonage silent_auth: SubscriberCheck and PhoneCheck), or
/// a CAMARA operator's (SIM Swap: SIMCheck). A route the provider cannot serve is answered 501.
public enum ServedProvider: Sendable {
    case truID(TruAPIClient)
    case silentAuth(name: String, any SilentAuthProvider)
    case camara(CAMARAClient)

    /// The name `--provider` gives it, and the metrics' `provider` label.
    public var name: String {
        switch self {
        case .truID: "truid"
        case .silentAuth(let name, _): name
        case .camara: "camara"
        }
    }

    /// The tru.ID API client, when tru.ID is the provider.
    var truAPI: TruAPIClient? {
        if case .truID(let client) = self { return client }
        return nil
    }

    /// Checks that the provider can be used before serving: tru.ID's and the CAMARA operator's
    /// credentials with one token request; Twilio and Vonage take theirs with each call.
    func checkCredentials() async throws(CellpathError) {
        switch self {
        case .truID(let client):
            do throws(TruAPIError) {
                _ = try await client.accessToken(scopes: ["coverage"])
            } catch {
                throw error.cellpathError
            }
        case .camara(let client):
            do throws(CAMARAError) {
                _ = try await client.accessToken(scopes: [SimSwapAPI.camaraScope])
            } catch {
                throw error.cellpathError(of: client.endpoint)
            }
        case .silentAuth:
            return
        }
    }

    /// The 501 of a route this provider cannot serve, saying why.
    func notServed(_ route: String, _ reason: String) -> ErrorAnswer {
        ErrorAnswer(501, "serve --provider \(name) does not serve \(route): \(reason)")
    }

    /// Why a tru.ID-only route (coverage, webhooks) is not served.
    var noTruIDRoute: String { "it is tru.ID's own API (serve --provider truid)" }
}
