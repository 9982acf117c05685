/// The tru.ID API's SIM-change answer: `no_sim_change` against the check's `period` and the
/// `sim_change_within` bucket (minutes) that contains the last SIM change.
public struct SimChangeWindow: Sendable, Equatable {
    /// The bucket upper bounds, in minutes, as documented by tru.ID (1 h … 365 d); a change
    /// longer ago than the last bound is reported as 525601 (> 365 days).
    public static let bucketBounds = [60, 360, 720, 1440, 2880, 4320, 10080, 43200, 129600, 259200, 525600]
    /// The default `period` (7 days, in minutes) and its allowed range.
    public static let defaultPeriod = 10080
    public static let periodRange = 60 ... 540_000

    public var noSimChange: Bool
    /// nil when the SIM was never changed (or not within any known time).
    public var simChangeWithin: Int?

    /// Evaluates a SIM last changed `minutesAgo` minutes ago (nil = not known to have changed)
    /// against `period` minutes.
    public init(minutesAgo: Int?, period: Int) {
        guard let minutesAgo else {
            noSimChange = true
            simChangeWithin = nil
            return
        }
        noSimChange = minutesAgo > period
        simChangeWithin = SimChangeWindow.bucketBounds.first { minutesAgo <= $0 } ?? 525_601
    }
}
