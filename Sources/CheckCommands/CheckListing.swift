import CellpathCLI
import CellpathCore
import CellularHTTP
import CommandLineKit
import Workflow

/// How the check commands print a run: a record for JSON (docs/json.md) and lines for people.
package enum CheckListing {
    /// The command's output for one run: the verdict's line as the result, what led to it as details.
    package static func output(_ report: CheckRunReport, _ disclosure: Disclosure) throws -> Output {
        let verdict = report.outcome.map {
            "\(disclosure.reveal(report.phoneNumber, as: .msisdn)): \($0.summary(report.product))"
        }
        return Output(
            try record(report, disclosure), humanLines: verdict.map { [$0] } ?? [], details: details(report, disclosure)
        )
    }

    /// The exit code of a run: its verdict, or its failure's.
    package static func outcome(_ report: CheckRunReport, _ disclosure: Disclosure) throws -> CommandOutcome {
        let output = try output(report, disclosure)
        if var failure = report.failure {
            if report.checkURLFailure?.reason == FetchFailureReason.downgradeRefused.rawValue {
                failure.hint =
                    "the check's code or assertion would have gone without TLS; --allow-downgrade lets the check go on regardless"
            }
            var details = Record()
            if let checkURL = report.checkURLFailure { details = try FetchCommand.details(of: checkURL) }
            details.add("step", .optional(report.steps.last { !$0.succeeded }?.step))
            return CommandOutcome(output, failure: CommandFailure(failure, details: details))
        }
        return CommandOutcome(output, exitCode: exitCode(report.outcome))
    }

    static func exitCode(_ outcome: CheckOutcome?) -> ExitCode {
        switch outcome {
        case .verified, nil: .success
        case .notVerified: .notVerified
        case .simChanged: .simChanged
        }
    }

    /// The run as docs/json.md lists it. The phone number is masked unless `--verbose-full`.
    package static func record(_ report: CheckRunReport, _ disclosure: Disclosure) throws -> Record {
        var record = Record()
        record.add("product", .string(report.product.rawValue))
        record.add("phone_number", .string(disclosure.reveal(report.phoneNumber, as: .msisdn)), label: "phone number")
        record.add("backend", .string(report.backend))
        if let deviceLeg = report.deviceLeg { record.add("device_leg", .string(deviceLeg), label: "device leg") }
        record.add("api_version", .string(report.apiVersion.rawValue), label: "API version")
        record.add("outcome", .optional(report.outcome?.rawValue))
        record.add("check_id", .optional(report.checkID ?? report.verdict?.checkID), label: "check id")
        let verdict = report.verdict
        record.add("status", .optional(verdict?.status))
        if report.deviceLeg != nil {
            record.add("error_codes", .optional(verdict?.errorCode), label: "provider error codes")
        }
        if report.product != .simCheck { record.add("match", verdict?.match.map(Value.bool) ?? .null) }
        if report.product != .phoneCheck {
            record.add("no_sim_change", verdict?.noSimChange.map(Value.bool) ?? .null, label: "no SIM change")
            record.add(
                "sim_change_within", verdict?.simChangeWithin.map(Value.int) ?? .null, label: "SIM change within (min)")
            record.add("last_sim_change_at", .optional(verdict?.lastSimChangeAt), label: "last SIM change")
        }
        if report.product != .simCheck {
            record.add("path", report.path.map { pathValue($0, disclosure) } ?? .null)
            record.add("operator_sent", .optional(report.operatorSent), label: "x-tru-ops")
            record.add("radio", report.radio.map(radioValue) ?? .null)
            if let position = positionValue(report.location?.fix, fixed: nil) { record.add("position", position) }
        }
        record.add("steps", stepsValue(report.steps, withStart: true))
        record.add("total_ms", .double(report.totalMs), label: "total (ms)")
        if report.product != .simCheck {
            record.add(
                "check_url",
                try report.checkURL.map { .record(try FetchCommand.record($0.redacted(disclosure), disclosure)) }
                    ?? .null,
                label: "check_url chain")
        }
        return record
    }

    /// Where the check ran, as docs/json.md lists it: the GNSS fix (`source` `gnss`, with its
    /// accuracy, fix time and age where the modem told them), else the fixed position of
    /// `--position` (`source` `fixed`); nil without either. Not masked: a position is recorded
    /// as `--position` gives it.
    static func positionValue(_ fix: GNSSFix?, fixed: GeoPosition?) -> Value? {
        guard let position = fix?.position ?? fixed else { return nil }
        var place = Record()
        place.add("lat", .double(position.latitude))
        place.add("lon", .double(position.longitude))
        place.add("source", .string(fix == nil ? "fixed" : "gnss"))
        if let fix {
            if let accuracy = fix.accuracyMeters { place.add("accuracy_m", .double(accuracy), label: "accuracy (m)") }
            if let time = fix.fixTime { place.add("fix_time", .time(time), label: "fix time") }
            if let age = fix.ageSeconds {
                place.add("age_s", .double((age * 1000).rounded() / 1000), label: "age (s)")
            }
        }
        return .record(place)
    }

    /// The steps as docs/json.md lists them: `{step, start_ms?, duration_ms, succeeded}`.
    static func stepsValue(_ steps: [CheckStepTiming], withStart: Bool) -> Value {
        .list(
            steps.map { step in
                var fields = Record()
                fields.add("step", .string(step.step))
                if withStart { fields.add("start_ms", .double(step.startMs)) }
                fields.add("duration_ms", .double(step.durationMs))
                fields.add("succeeded", .bool(step.succeeded))
                return .record(fields)
            })
    }

    static func pathValue(_ path: CellularPath, _ disclosure: Disclosure) -> Value {
        var fields = Record()
        fields.add("interface", .string(path.interfaceName))
        fields.add("ipv4_address", .optional(path.ipv4Address), label: "IPv4 address")
        fields.add("ipv6_address", .optional(path.ipv6Address), label: "IPv6 address")
        fields.add("dns_servers", .list(path.dnsServers.map(Value.string)), label: "DNS servers")
        fields.add("operator", .optional(path.operatorID))
        fields.add("modem_backend", .optional(path.modemBackend))
        return .record(fields)
    }

    /// The radio context as docs/json.md lists it: only what the modem told (absent keys are
    /// values it did not tell).
    static func radioValue(_ radio: RadioContext) -> Value {
        var fields = Record()
        fields.add("source", .string(radio.source))
        func add(_ key: String, _ value: Value?, label: String? = nil) {
            if let value { fields.add(key, value, label: label) }
        }
        add("rat", radio.accessTechnology.map { .string($0.rawValue) }, label: "technology")
        add("operator", radio.servingOperator?.id.map(Value.string))
        add("operator_name", radio.servingOperator?.name.map(Value.string), label: "operator name")
        add("roaming", radio.roaming.map(Value.bool))
        add("cell_id", radio.cellID.map { .int(Int(truncatingIfNeeded: $0)) }, label: "cell id")
        let tracking = [.lte, .nr5g].contains(radio.accessTechnology)
        add(tracking ? "tac" : "lac", radio.areaCode.map(Value.int), label: tracking ? "TAC" : "LAC")
        add("pci", radio.physicalCellID.map(Value.int), label: "PCI")
        add("band", radio.band.map(Value.string))
        add("channel", radio.channel.map(Value.int))
        add("rssi_dbm", radio.rssiDbm.map(Value.double), label: "RSSI (dBm)")
        add("rsrp_dbm", radio.rsrpDbm.map(Value.double), label: "RSRP (dBm)")
        add("rsrq_db", radio.rsrqDb.map(Value.double), label: "RSRQ (dB)")
        add("sinr_db", radio.sinrDb.map(Value.double), label: "SINR (dB)")
        add("ss_rsrp_dbm", radio.ssRsrpDbm.map(Value.double), label: "SS-RSRP (dBm)")
        add("ss_sinr_db", radio.ssSinrDb.map(Value.double), label: "SS-SINR (dB)")
        return .record(fields)
    }

    /// Lines for people about the run: what ran, the path, the chain's hops and end, the steps, the
    /// verdict's fields.
    static func details(_ report: CheckRunReport, _ disclosure: Disclosure) -> [String] {
        let name = report.deviceLeg != nil ? "verify" : report.product.commandName
        var lines = [
            "[\(name)] \(disclosure.reveal(report.phoneNumber, as: .msisdn)) via \(report.backend) (\(report.apiVersion.rawValue))"
        ]
        if let deviceLeg = report.deviceLeg { lines.append("[\(name)] device leg: \(deviceLeg) rules") }
        if let path = report.path {
            lines.append(
                "[\(name)] cellular path: \(path.interfaceName) \(path.ipv4Address ?? "-"), DNS \(path.dnsServers.joined(separator: ", "))"
                    + (report.operatorSent.map { ", x-tru-ops \($0)" } ?? ""))
        }
        if let radio = report.radio { lines.append("[\(name)] radio: \(radioLine(radio))") }
        if let checkURL = report.checkURL { lines += checkURL.humanLines(disclosure) }
        let steps = report.steps.map {
            "\($0.step) \(Int($0.durationMs.rounded())) ms\($0.succeeded ? "" : " (failed)")"
        }
        lines.append("[\(name)] steps: \(steps.joined(separator: ", ")); total \(Int(report.totalMs.rounded())) ms")
        if let verdict = report.verdict {
            var fields: [String] = []
            if let id = verdict.checkID ?? report.checkID { fields.append("check_id=\(id)") }
            if let status = verdict.status { fields.append("status=\(status)") }
            if let match = verdict.match { fields.append("match=\(match)") }
            if let noChange = verdict.noSimChange { fields.append("no_sim_change=\(noChange)") }
            if let within = verdict.simChangeWithin { fields.append("sim_change_within=\(within)") }
            lines.append("[\(name)] " + fields.joined(separator: " "))
        }
        return lines
    }
}

extension CheckListing {
    /// The radio context in a few words: `lte 001-01 roaming, cell 27447297 (PCI 101, B3), RSRP -95 dBm`.
    static func radioLine(_ radio: RadioContext) -> String {
        var network = [radio.accessTechnology?.rawValue, radio.servingOperator?.id].compactMap { $0 }
        if radio.roaming == true { network.append("roaming") }
        var parts = [network.isEmpty ? "unknown network" : network.joined(separator: " ")]
        if let cell = radio.cellID {
            let detail = [radio.physicalCellID.map { "PCI \($0)" }, radio.band].compactMap { $0 }
            parts.append("cell \(cell)" + (detail.isEmpty ? "" : " (\(detail.joined(separator: ", ")))"))
        }
        let signal = [
            radio.rsrpDbm.map { "RSRP \(Int($0)) dBm" }, radio.sinrDb.map { "SINR \($0) dB" },
            radio.rssiDbm.map { "RSSI \(Int($0)) dBm" }
        ].compactMap { $0 }
        if !signal.isEmpty { parts.append(signal.joined(separator: ", ")) }
        return parts.joined(separator: ", ")
    }
}

extension CheckProduct {
    /// The command that runs it: `subscriber-check`, `phone-check`, `sim-check`.
    package var commandName: String { rawValue.replacingEvery("_", with: "-") }
}

extension CheckOutcome {
    /// One line for people about `product`'s outcome.
    func summary(_ product: CheckProduct) -> String {
        switch (self, product) {
        case (.verified, .simCheck): "the SIM did not change within the period"
        case (.simChanged, .simCheck): "the SIM CHANGED within the period"
        case (.verified, _):
            "verified: the number is this SIM's"
                + (product == .subscriberCheck ? ", and the SIM did not change recently" : "")
        case (.notVerified, _): "NOT verified: the number is not this SIM's"
        case (.simChanged, _): "the number is this SIM's, but the SIM CHANGED recently"
        }
    }
}
