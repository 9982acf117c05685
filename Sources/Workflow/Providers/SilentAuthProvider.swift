import CellpathCore

/// The backend leg of a silent-auth provider: create a verification of a phone number (the URL
/// the device opens, under the provider's `deviceLeg` rules), then complete it with what the
/// chain ended with. The device leg between the two is the cellular chain's, the same for every
/// provider. Calls go over the default network, never through the cellular path.
///
/// A provider is one file per layer: its client here (`Providers/<Name>/`), its fake API in
/// `SimulatedServices`, its profile in `Configuration`, and one case of `ProviderName`.
public protocol SilentAuthProvider: Sendable {
    /// What the reports call it: `Twilio Verify https://verify.twilio.com`.
    var name: String { get }
    /// How the device opens the verification's URL.
    var deviceLeg: DeviceLegRules { get }
    /// Creates a verification of `phoneNumber` (E.164): its id and the URL the device opens.
    func create(phoneNumber: String, options: CheckOptions) async throws(CellpathError) -> CreatedCheckHandle
    /// Completes `verification` with what its chain ended with (`DeviceLegRules.ending`).
    func complete(
        _ verification: CreatedCheckHandle, ending: CheckCallback?
    ) async throws(CellpathError)
        -> CheckVerdict
}

/// The providers `cellpath verify --provider` names. `vonage-nv` and `camara` are OIDC flows
/// (Number Verification), whose provider is in the `CAMARA` module.
public enum ProviderName: String, Sendable, CaseIterable {
    case truid, twilio, vonage
    case vonageNumberVerification = "vonage-nv"
    case camara

    /// Whether it is Number Verification (`--hashed` applies).
    public var isNumberVerification: Bool { self == .vonageNumberVerification || self == .camara }

    /// The product whose verdict fields the provider's answer fills: tru.ID's SubscriberCheck (a
    /// match and the SIM-change fields), else a PhoneCheck's (a match).
    public var verdictProduct: CheckProduct { self == .truid ? .subscriberCheck : .phoneCheck }
}

extension SilentAuthProvider {
    /// The provider as the check engine's backend (`CheckRunner`, with `deviceLeg` on its chain).
    public var backend: any CheckBackend { ProviderBackend(provider: self) }
}

/// A provider as the check engine's backend: create and complete are the provider's; it has
/// no SIMCheck or coverage.
struct ProviderBackend: CheckBackend {
    let provider: any SilentAuthProvider

    var name: String { provider.name }

    func create(
        _ product: CheckProduct, phoneNumber: String, options: CheckOptions
    ) async throws(CellpathError) -> CreatedCheckHandle {
        try await provider.create(phoneNumber: phoneNumber, options: options)
    }

    func complete(
        _ product: CheckProduct, check: CreatedCheckHandle, callback: CheckCallback?
    ) async throws(CellpathError) -> CheckVerdict {
        try await provider.complete(check, ending: callback)
    }

    func simCheck(phoneNumber: String, options: CheckOptions) async throws(CellpathError) -> CheckVerdict {
        throw CellpathError(.usage, "\(provider.name) has no SIMCheck")
    }

    func coverageAccess() async throws(CellpathError) -> CoverageAccess {
        throw CellpathError(.usage, "\(provider.name) has no coverage API")
    }
}
