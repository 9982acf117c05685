import CellpathCore
import CellularHTTP
import Synchronization
import Workflow

/// Number Verification as a silent-auth provider of `verify` (`--provider camara`, `vonage-nv`):
/// creating is the authorization request (its URL is what the device opens, its `state` the
/// verification's id); the chain ends at the redirect URI unrequested; completing exchanges the
/// code and asks `verify`, then (`simSwap`) whether a verified number's SIM changed, as a
/// SubscriberCheck's `no_sim_change` says it. The requests between the two steps are held here, by state.
public struct NumberVerificationProvider: SilentAuthProvider {
    /// The SIM Swap check of a verified number: the operator's API and the period in hours.
    public struct SimSwapCheck: Sendable {
        public var api: SimSwapAPI
        public var maxAge: Int
        public init(api: SimSwapAPI, maxAge: Int) {
            self.api = api
            self.maxAge = maxAge
        }
    }

    public let name: String
    public let verification: CAMARANumberVerification
    /// `hashedPhoneNumber` instead of `phoneNumber`.
    public let hashed: Bool
    /// Whether a verified number's SIM changed is asked too; nil: not asked.
    public let simSwap: SimSwapCheck?
    public let deviceLeg: DeviceLegRules
    private let pending = PendingAuthorizations()

    /// Throws `.dataError` for a redirect URI that is not an absolute http(s) URL.
    public init(
        name: String, rules: String, verification: CAMARANumberVerification, hashed: Bool,
        simSwap: SimSwapCheck? = nil
    ) throws(CellpathError) {
        let end: RedirectURIEnd
        do throws(FetchFailure) {
            end = try RedirectURIEnd(verification.redirectURI)
        } catch {
            throw CellpathError(.configuration, "the redirect URI: \(error.message)")
        }
        self.name = name
        self.verification = verification
        self.hashed = hashed
        self.simSwap = simSwap
        // The operator's pages are the device's browser's: https only, as an SDK would open them.
        // OAuth's error at the redirect URI goes to `complete`, which names it (`CAMARAError`).
        deviceLeg = DeviceLegRules(
            name: rules, httpsOnly: true, ending: .authorizationCode, errorEndingIsVerdict: true, redirectURI: end)
    }

    /// The number `create` is given to ask the operator for the device's number instead of
    /// verifying one (`device-phone-number`, where the operator offers it).
    public static let deviceNumber = ""

    public func create(phoneNumber: String, options: CheckOptions) async throws(CellpathError) -> CreatedCheckHandle {
        do throws(CAMARAError) {
            let request =
                phoneNumber == Self.deviceNumber
                ? try await verification.authorizationRequestForSharing()
                : try await verification.authorizationRequest(forVerifying: phoneNumber, loginHint: true)
            pending.hold(request, phoneNumber: phoneNumber)
            // The code exchange after the device leg then finds the token endpoint's address.
            verification.client.resolveTokenEndpointAhead()
            return CreatedCheckHandle(checkID: request.state, checkURL: request.url)
        } catch {
            throw error.cellpathError(of: verification.client.endpoint)
        }
    }

    public func complete(
        _ created: CreatedCheckHandle, ending: CheckCallback?
    ) async throws(CellpathError) -> CheckVerdict {
        guard let (request, phoneNumber) = pending.take(created.checkID) else {
            throw CellpathError(.internalError, "no authorization request is held for this verification")
        }
        guard let ending else {
            throw CellpathError(
                .protocolError, "the authorization ended elsewhere than with a redirect to the redirect URI")
        }
        do throws(CAMARAError) {
            let code = try request.code(
                state: ending.checkID.isEmpty ? nil : ending.checkID, code: ending.code, error: ending.error,
                errorDescription: ending.errorDescription)
            var verdict: CheckVerdict
            var phoneNumber = phoneNumber
            if phoneNumber == Self.deviceNumber {
                phoneNumber = try await verification.devicePhoneNumber(code: code, of: request)
                verdict = CheckVerdict(checkID: created.checkID, status: "shared", match: true)
                verdict.devicePhoneNumber = phoneNumber
            } else {
                let verified = try await verification.verify(phoneNumber, hashed: hashed, code: code, of: request)
                verdict = CheckVerdict(
                    checkID: created.checkID, status: verified ? "verified" : "not_verified", match: verified)
            }
            if verdict.match == true, let simSwap {
                let client = verification.client
                let swapped = try await client.simSwapped(
                    phoneNumber: phoneNumber, maxAge: simSwap.maxAge, api: simSwap.api)
                verdict.noSimChange = !swapped
                verdict.lastSimChangeAt = try await client.simSwapDate(phoneNumber: phoneNumber, api: simSwap.api)
                    .latestSimChange
            }
            return verdict
        } catch {
            throw error.cellpathError(of: verification.client.endpoint)
        }
    }
}

/// The authorization requests created and not completed yet, by state; the oldest dropped past
/// `limit` (runs whose device leg failed never complete).
private final class PendingAuthorizations: Sendable {
    static let limit = 64
    private let held = Mutex<[(state: String, request: AuthorizationRequest, phoneNumber: String)]>([])

    func hold(_ request: AuthorizationRequest, phoneNumber: String) {
        held.withLock {
            $0.append((request.state, request, phoneNumber))
            if $0.count > Self.limit { $0.removeFirst($0.count - Self.limit) }
        }
    }

    func take(_ state: String) -> (AuthorizationRequest, String)? {
        held.withLock { held in
            guard let index = held.firstIndex(where: { $0.state == state }) else { return nil }
            let found = held.remove(at: index)
            return (found.request, found.phoneNumber)
        }
    }
}
