import CellpathCore

/// One check of a field run, as the report reads it from a JSON line of `--repeat … --json`
/// (docs/json.md): only the members the report shows; any other member is ignored. The radio
/// context (`radio.operator`, `radio.rat`, `radio.cell_id`, `radio.band`, `radio.rsrp_dbm`) and the
/// position (`position.lat`, `position.lon`) are read when a record carries them.
package struct FieldRecord: Sendable {
    /// One step of the check: its name (`path`, `create`, `check_url`, …) and how it went.
    package struct Step: Sendable {
        package var name: String
        package var durationMs: Double
        package var succeeded: Bool
    }

    /// The radio the check ran on, when the record carries it.
    package struct Radio: Sendable {
        package var operatorName: String?
        package var rat: String?
        package var cellID: String?
        package var band: String?
        package var rsrp: Double?
    }

    /// Where the check ran, when the record carries it (degrees).
    package struct Position: Sendable {
        package var lat: Double
        package var lon: Double
    }

    package var product: String
    /// The field run the check belongs to (`run_id`; a resumed run keeps its id).
    package var runID: String?
    package var modem: Int?
    /// The modem's SIM slot the check ran on (`--sim-slot all`); nil when the run named none.
    package var slot: Int?
    package var run: Int?
    /// When the check started (seconds since 1970): the line's `started_at`, else its first
    /// hop's; nil when the record has neither.
    package var startedAt: Double?
    package var phoneNumber: String?
    /// `verified`, `not_verified`, `sim_changed`; nil when the run failed.
    package var outcome: String?
    /// Why the run failed (`failure`, as the field summary groups failures), nil when it did not.
    package var failure: String?
    package var error: String?
    package var steps: [Step]
    package var totalMs: Double?
    package var checkID: String?
    package var interface: String?
    package var ipv4Address: String?
    package var operatorSent: String?
    package var radio: Radio?
    package var position: Position?

    /// The step that failed, if any.
    package var failedStep: String? { steps.first { !$0.succeeded }?.name }

    /// The group name of the modem: `modem N`, or `this modem` when the run named none.
    package var modemName: String { modem.map { "modem \($0)" } ?? "this modem" }
}

extension FieldRecord {
    /// What a JSON line of a field run holds: a check's record, the run's summary line (which
    /// the report recomputes from the checks and so skips), or neither.
    package enum Line: Sendable {
        case check(FieldRecord)
        case summary
    }

    /// Reads a parsed line; nil when it is an object of neither kind (the caller says which line).
    package static func line(_ json: JSONValue) -> Line? {
        guard case .object = json else { return nil }
        if json["outcomes"] != nil && json["runs"] != nil { return .summary }
        guard let product = json[string: "product"], let steps = json["steps"]?.arrayValue else { return nil }
        let hops = json["check_url"]?["hops"]?.arrayValue
        let radio = json["radio"].flatMap { radio -> Radio? in
            guard case .object = radio else { return nil }
            return Radio(
                operatorName: radio["operator"]?.text, rat: radio["rat"]?.text, cellID: radio["cell_id"]?.text,
                band: radio["band"]?.text, rsrp: radio["rsrp_dbm"]?.number)
        }
        var position: Position?
        if let lat = json["position"]?["lat"]?.number, let lon = json["position"]?["lon"]?.number,
            (-90 ... 90).contains(lat), (-180 ... 180).contains(lon)
        {
            position = Position(lat: lat, lon: lon)
        }
        let outcome = json[string: "outcome"]
        return .check(
            FieldRecord(
                product: product, runID: json[string: "run_id"], modem: json["modem"]?.intValue,
                slot: json["slot"]?.intValue, run: json["run"]?.intValue,
                startedAt: json["started_at"]?.number ?? hops?.first?["started_at"]?.number,
                phoneNumber: json[string: "phone_number"], outcome: outcome,
                failure: outcome != nil ? nil : json[string: "failure"] ?? "unknown",
                error: json[string: "error"],
                steps: steps.compactMap { step in
                    guard let name = step[string: "step"], let ms = step["duration_ms"]?.number else { return nil }
                    return Step(name: name, durationMs: ms, succeeded: step["succeeded"]?.boolValue ?? false)
                },
                totalMs: json["total_ms"]?.number, checkID: json[string: "check_id"],
                interface: json["path"]?[string: "interface"], ipv4Address: json["path"]?[string: "ipv4_address"],
                operatorSent: json[string: "operator_sent"], radio: radio, position: position))
    }
}

extension JSONValue {
    /// A number, whole or not.
    var number: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value) where value.isFinite: value
        default: nil
        }
    }

    /// A string, or a whole number as text (a cell id or band may be written either way).
    var text: String? {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        default: nil
        }
    }
}
