import CGIO
import CModemManager
import CellpathCore
import GLibRuntime
import Modems

/// The GNSS fix through ModemManager's Location interface: the GPS raw source enabled (beside
/// the sources already enabled) when it is not, its latitude, longitude and UTC time read until
/// they hold a position or the bound passes, and the sources set back as they were. GPS raw
/// gives no accuracy: the fix has none.
extension ModemManagerModem {
    /// How often the GPS raw location is read again while it holds no position.
    static let gpsRawPoll = Duration.milliseconds(250)

    func gnssFix(within bound: Duration) async throws(ModemError) -> GNSSReading {
        guard let location = mm_object_peek_modem_location(object),
            mm_modem_location_get_capabilities(location).rawValue & MM_MODEM_LOCATION_SOURCE_GPS_RAW.rawValue != 0
        else { return .noFix("ModemManager offers no GPS location for this modem") }
        let enabled = mm_modem_location_get_enabled(location)
        let wasEnabled = enabled.rawValue & MM_MODEM_LOCATION_SOURCE_GPS_RAW.rawValue != 0
        if !wasEnabled {
            try await setupLocation(
                location, MMModemLocationSource(rawValue: enabled.rawValue | MM_MODEM_LOCATION_SOURCE_GPS_RAW.rawValue))
        }
        let deadline = ContinuousClock.now + bound
        var reading = GNSSReading.noFix("ModemManager reported no GPS position within \(bound)")
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if let raw = try await gpsRaw(location) {
                defer { g_object_unref(gpointer(raw)) }
                if let read = Self.reading(raw, now: Double(g_get_real_time()) / 1e6) {
                    reading = read
                    break
                }
            }
            do { try await Task.sleep(for: Self.gpsRawPoll) } catch { break }
        }
        if !wasEnabled {
            do { try await setupLocation(location, enabled) } catch {
                session.logger.debug("\(error.message)")
            }
        }
        return reading
    }

    private func setupLocation(
        _ location: UnsafeMutablePointer<MMModemLocation>, _ sources: MMModemLocationSource
    ) async throws(ModemError) {
        try await session.call("set up the location sources") { call in
            mm_modem_location_setup(location, sources, 0, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard mm_modem_location_setup_finish(location, result, &error) != 0 else { throw GLibError(taking: error) }
        }
    }

    /// The GPS raw location (a reference of the caller's); nil before ModemManager has one.
    private func gpsRaw(
        _ location: UnsafeMutablePointer<MMModemLocation>
    ) async throws(ModemError) -> UnsafeMutablePointer<MMLocationGpsRaw>? {
        try await session.call("read the GPS location") { call in
            mm_modem_location_get_gps_raw(location, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            let value = mm_modem_location_get_gps_raw_finish(location, result, &error)
            if value == nil, error != nil { throw GLibError(taking: error) }
            return value
        }
    }

    /// The reading of a GPS raw location at `now`; nil while it holds no position yet.
    nonisolated static func reading(_ raw: UnsafeMutablePointer<MMLocationGpsRaw>, now: Double) -> GNSSReading? {
        let latitude = mm_location_gps_raw_get_latitude(raw), longitude = mm_location_gps_raw_get_longitude(raw)
        guard latitude != -Double.greatestFiniteMagnitude, longitude != -Double.greatestFiniteMagnitude else {
            return nil
        }
        let utc = mm_location_gps_raw_get_utc_time(raw).map { String(cString: $0) }
        return GNSSFix.reading(
            latitude: latitude, longitude: longitude, accuracyMeters: nil,
            fixTime: utc.flatMap { nmeaTime($0, now: now) }, now: now)
    }

    /// An NMEA UTC time of day (`hhmmss` or `hhmmss.ss`, GGA's field) as seconds since the
    /// epoch: today's (UTC) at `now`, yesterday's when that would be more than a minute ahead
    /// of `now` (a fix just before midnight); nil for anything else.
    nonisolated static func nmeaTime(_ text: String, now: Double) -> Double? {
        let whole = text.prefix { $0 != "." }
        guard whole.count == 6, whole.allSatisfy({ $0.isASCII && $0.isNumber }),
            let fraction = Double("0" + text.dropFirst(6))
        else { return nil }
        let digits = whole.compactMap(\.wholeNumberValue)
        let hours = digits[0] * 10 + digits[1], minutes = digits[2] * 10 + digits[3],
            seconds = digits[4] * 10 + digits[5]
        guard hours < 24, minutes < 60, seconds < 61 else { return nil }
        let midnight = (now / 86400).rounded(.down) * 86400
        let time = midnight + Double(hours * 3600 + minutes * 60 + seconds) + fraction
        return time > now + 60 ? time - 86400 : time
    }
}
