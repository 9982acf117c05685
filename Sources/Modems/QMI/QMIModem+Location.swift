import CGIO
import CQMI
import CellpathCore
import GLibRuntime

/// The GNSS fix over QMI LOC: Register Events (position reports), Start a session, the first
/// Position Report that ends it (success or failure) within the bound, Stop. The LOC client
/// stays allocated for the session's later reads and goes back on `close()`.
extension QMIModem {
    /// The LOC session ID cellpath starts (any value 0…255; one session at a time).
    static let locationSessionID: UInt8 = 1

    func gnssFix(within bound: Duration) async throws(ModemError) -> GNSSReading {
        let client = try await client(QMI_SERVICE_LOC)
        let (reports, sink) = AsyncStream<QMIPositionReport>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let handler = cqmi_client_connect_indication(
            client, "position-report",
            { _, output, data in
                guard let output, let data else { return }
                let sink = Unmanaged<PositionReportSink>.fromOpaque(data).takeUnretainedValue()
                sink.continuation.yield(QMIPositionReport(OpaquePointer(output)))
            }, Unmanaged.passRetained(PositionReportSink(sink)).toOpaque(),
            { data, _ in Unmanaged<PositionReportSink>.fromOpaque(data!).release() })
        defer {
            g_signal_handler_disconnect(gpointer(client), handler)
            sink.finish()
        }
        try await registerPositionReports()
        try await startLocationSession()
        let reading = await Self.firstReading(reports, within: bound)
        await stopLocationSession()
        return reading ?? .noFix("no position report within \(bound) (the receiver has no fix yet)")
    }

    /// The first report that ends the session, read at its arrival; nil when none came within `bound`.
    nonisolated private static func firstReading(
        _ reports: AsyncStream<QMIPositionReport>, within bound: Duration
    ) async -> GNSSReading? {
        await withTaskGroup(of: GNSSReading?.self) { group in
            group.addTask {
                for await report in reports {
                    if let reading = report.reading(now: Double(g_get_real_time()) / 1e6) { return reading }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: bound)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private func registerPositionReports() async throws(ModemError) {
        let input = qmi_message_loc_register_events_input_new()
        defer { qmi_message_loc_register_events_input_unref(input) }
        _ = qmi_message_loc_register_events_input_set_event_registration_mask(
            input, QMI_LOC_EVENT_REGISTRATION_FLAG_POSITION_REPORT, nil)
        _ = try await request(
            "register for LOC position reports", QMI_SERVICE_LOC,
            start: { client, timeout, call in
                qmi_client_loc_register_events(
                    cqmi_client_loc(client), input, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_loc_register_events_finish(cqmi_client_loc(client), result, error)
            },
            result: qmi_message_loc_register_events_output_get_result,
            unref: qmi_message_loc_register_events_output_unref)
    }

    /// Periodic fixes a second apart, no intermediate reports (as ModemManager starts them):
    /// the first final report is the one read.
    private func startLocationSession() async throws(ModemError) {
        let input = qmi_message_loc_start_input_new()
        defer { qmi_message_loc_start_input_unref(input) }
        _ = qmi_message_loc_start_input_set_session_id(input, Self.locationSessionID, nil)
        _ = qmi_message_loc_start_input_set_intermediate_report_state(
            input, QMI_LOC_INTERMEDIATE_REPORT_STATE_DISABLE, nil)
        _ = qmi_message_loc_start_input_set_minimum_interval_between_position_reports(input, 1000, nil)
        _ = try await request(
            "start a LOC session", QMI_SERVICE_LOC,
            start: { client, timeout, call in
                qmi_client_loc_start(
                    cqmi_client_loc(client), input, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in qmi_client_loc_start_finish(cqmi_client_loc(client), result, error) },
            result: qmi_message_loc_start_output_get_result,
            unref: qmi_message_loc_start_output_unref)
    }

    /// Stops the session, also when the task was cancelled (the receiver would go on fixing);
    /// a failure is only logged.
    private func stopLocationSession() async {
        let input = qmi_message_loc_stop_input_new()
        defer { qmi_message_loc_stop_input_unref(input) }
        _ = qmi_message_loc_stop_input_set_session_id(input, Self.locationSessionID, nil)
        do throws(ModemError) {
            _ = try await request(
                "stop the LOC session", QMI_SERVICE_LOC, session: session.cleanup(timeout: Self.closeTimeout),
                start: { client, timeout, call in
                    qmi_client_loc_stop(
                        cqmi_client_loc(client), input, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in qmi_client_loc_stop_finish(cqmi_client_loc(client), result, error) },
                result: qmi_message_loc_stop_output_get_result,
                unref: qmi_message_loc_stop_output_unref)
        } catch {
            session.logger.debug("\(error.message)")
        }
    }

    /// Where the position reports of one read go (the signal handler's data).
    final class PositionReportSink: Sendable {
        let continuation: AsyncStream<QMIPositionReport>.Continuation

        init(_ continuation: AsyncStream<QMIPositionReport>.Continuation) { self.continuation = continuation }
    }
}

/// What a QMI LOC Position Report indication tells: the session's status, and the position,
/// accuracy and UTC time where it carries them.
struct QMIPositionReport: Sendable, Equatable {
    /// `QmiLocSessionStatus`: 0 success, 1 in progress, then the failures.
    var sessionStatus: UInt32?
    var latitude: Double?
    var longitude: Double?
    var horizontalUncertainty: Double?
    /// Milliseconds since the epoch (UTC).
    var utcMilliseconds: UInt64?

    init(
        sessionStatus: UInt32?, latitude: Double? = nil, longitude: Double? = nil,
        horizontalUncertainty: Double? = nil, utcMilliseconds: UInt64? = nil
    ) {
        self.sessionStatus = sessionStatus
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalUncertainty = horizontalUncertainty
        self.utcMilliseconds = utcMilliseconds
    }

    /// Reads the indication's output (a `QmiIndicationLocPositionReportOutput`).
    init(_ output: OpaquePointer) {
        var status = QMI_LOC_SESSION_STATUS_SUCCESS
        sessionStatus =
            qmi_indication_loc_position_report_output_get_session_status(output, &status, nil) != 0
            ? status.rawValue : nil
        var value: Double = 0
        latitude = qmi_indication_loc_position_report_output_get_latitude(output, &value, nil) != 0 ? value : nil
        longitude = qmi_indication_loc_position_report_output_get_longitude(output, &value, nil) != 0 ? value : nil
        var uncertainty: Float = 0
        horizontalUncertainty =
            qmi_indication_loc_position_report_output_get_horizontal_uncertainty_circular(output, &uncertainty, nil)
                != 0 ? Double(uncertainty) : nil
        var utc: guint64 = 0
        utcMilliseconds =
            qmi_indication_loc_position_report_output_get_utc_timestamp(output, &utc, nil) != 0 ? UInt64(utc) : nil
    }

    /// The reading at `now` (seconds since the epoch): a fix of a successful session, why there
    /// is none for a failed one, nil while the session is in progress (wait for the next report).
    func reading(now: Double) -> GNSSReading? {
        switch sessionStatus {
        case 0:
            return GNSSFix.reading(
                latitude: latitude, longitude: longitude, accuracyMeters: horizontalUncertainty,
                fixTime: utcMilliseconds.map { Double($0) / 1000 }, now: now)
        case 1: return nil
        case let status?:
            let name =
                qmi_loc_session_status_get_string(QmiLocSessionStatus(rawValue: status))
                .map { String(cString: $0) } ?? "status \(status)"
            return .noFix("the LOC session ended without a fix (\(name))")
        case nil: return .noFix("the position report carried no session status")
        }
    }
}
