/// A position the modem's GNSS receiver fixed (`--location`): where, how precisely, and when.
public struct GNSSFix: Sendable, Equatable {
    public var position: GeoPosition
    /// The horizontal accuracy in metres (QMI's circular horizontal uncertainty); nil when the
    /// modem gave none.
    public var accuracyMeters: Double?
    /// When the receiver fixed the position, in seconds since the epoch (UTC); nil when the modem
    /// gave no time.
    public var fixTime: Double?
    /// How old the fix was when it was read (seconds, never below zero: clocks a little
    /// apart); nil without a fix time.
    public var ageSeconds: Double?

    public init(position: GeoPosition, accuracyMeters: Double? = nil, fixTime: Double? = nil, ageSeconds: Double? = nil)
    {
        self.position = position
        self.accuracyMeters = accuracyMeters
        self.fixTime = fixTime
        self.ageSeconds = ageSeconds
    }

    /// A fix older than this (seconds) is another place's: the modem's last fix, kept.
    public static let maximumAge: Double = 600

    /// How long `--location` waits for a fix, beside the check_url chain.
    public static let readBound: Duration = .seconds(5)

    /// The reading of a receiver's report at `now` (seconds since the epoch): a fix when latitude and longitude are in
    /// range and the fix is not older than `maximumAge`; else why there is none. An accuracy
    /// that is negative or not finite is left out; a fix time more than a minute ahead of `now`
    /// is not believed and left out.
    public static func reading(
        latitude: Double?, longitude: Double?, accuracyMeters: Double?, fixTime: Double?, now: Double
    ) -> GNSSReading {
        guard let latitude, let longitude else { return .noFix("the receiver reported no position") }
        guard let position = GeoPosition(latitude: latitude, longitude: longitude) else {
            return .noFix("the receiver reported a position out of range (\(latitude), \(longitude))")
        }
        let time = fixTime.flatMap { $0.isFinite && $0 > 0 && $0 <= now + 60 ? $0 : nil }
        let fix = GNSSFix(
            position: position,
            accuracyMeters: accuracyMeters.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil },
            fixTime: time, ageSeconds: time.map { max(0, now - $0) })
        if let age = fix.ageSeconds, age > maximumAge {
            return .noFix("the receiver's last fix is \(Int(age)) s old (stale)")
        }
        return .fix(fix)
    }
}

/// What a GNSS read found: a fix, or why there is none (no receiver, no fix yet, a stale or
/// invalid report). Never an invented position.
public enum GNSSReading: Sendable, Equatable {
    case fix(GNSSFix)
    case noFix(String)

    public var fix: GNSSFix? {
        if case .fix(let fix) = self { return fix }
        return nil
    }
}
