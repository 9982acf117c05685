import CellpathCore
import CellularHTTP

/// Everything one check run did: the steps and their timings, the cellular path, the check_url
/// chain, the backend's verdict and the outcome, or the failure that stopped it.
public struct CheckRunReport: Sendable {
    public var product: CheckProduct
    /// E.164.
    public var phoneNumber: String
    /// The backend's name (`server …`, `tru.ID API …`).
    public var backend: String
    public var apiVersion: APIVersion
    public var steps: [CheckStepTiming] = []
    public var path: CellularPath?
    /// The operator sent as `x-tru-ops`, if any.
    public var operatorSent: String?
    /// The provider's device-leg rule set the chain ran under (`twilio-sna`); nil for the tru.ID
    /// check commands.
    public var deviceLeg: String?
    public var checkID: String?
    /// The check_url chain (PhoneCheck, SubscriberCheck).
    public var checkURL: CheckURLReport?
    /// The radio the chain ran on, read while it ran (a modem's path only).
    public var radio: RadioContext?
    /// The GNSS read beside the chain (`--location`); nil when none was asked for.
    public var location: GNSSReading?
    public var verdict: CheckVerdict?
    public var outcome: CheckOutcome?
    /// Why the run did not conclude.
    public var failure: CellpathError?
    /// The check_url chain's own failure, with its reason, hop and status, when that is what failed.
    public var checkURLFailure: CheckURLFailure?
    /// Milliseconds from start to end.
    public var totalMs: Double = 0

    public init(product: CheckProduct, phoneNumber: String, backend: String, apiVersion: APIVersion) {
        self.product = product
        self.phoneNumber = phoneNumber
        self.backend = backend
        self.apiVersion = apiVersion
    }

    /// The duration of `step`, if it ran.
    public func duration(of step: String) -> Double? { steps.first { $0.step == step }?.durationMs }
}
