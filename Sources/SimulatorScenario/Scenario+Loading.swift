import CellpathCore
import Glibc
import SystemSupport

extension Scenario {
    /// The hint of every scenario error.
    static let formatHint = "see docs/simulator.md for the scenario file format"

    /// Parses (strict JSON), reads and validates a scenario. Errors are `.dataError` and start
    /// with `source:line:column:`, then name the field: `scenario.json:4:18: modems[0].imei: must be 15 digits`.
    public static func decode(_ data: [UInt8], source: String = "scenario") throws -> Scenario {
        let root: JSONNode
        do {
            root = try StrictJSONParser.parse(data)
        } catch {
            throw CellpathError(
                .dataError, "\(source):\(error.position): not valid JSON: \(error.message)", hint: formatHint)
        }
        let positions = FieldPositions()
        positions.record("", root.position)
        do {
            let scenario = try read(root, positions)
            try scenario.check()
            return scenario
        } catch {
            let place = positions.position(of: error.field).map { "\(source):\($0)" } ?? source
            throw CellpathError(.dataError, "\(place): \(error.field): \(error.problem)", hint: formatHint)
        }
    }

    /// Reads, decodes and validates the scenario file at `path`; errors name `path` as given.
    public static func load(path: String) throws -> Scenario {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.read(path, limit: 1 << 20)
        } catch {
            if error.code == EFBIG {
                throw CellpathError(.dataError, "\(path): the scenario file is larger than 1 MiB")
            }
            let kind: FailureKind =
                switch error.code {
                case ENOENT, EISDIR: .dataError
                case EACCES: .permission
                default: .unavailable
                }
            throw CellpathError(kind, "cannot read scenario file \(path): \(error.reason)")
        }
        return try decode(bytes, source: path)
    }

    /// The scenario as pretty JSON with every field written (a modem without a SIM as `"sim": null`):
    /// `decode(encoded())` gives the same scenario back, which is how the daemon gets it.
    public func encoded() -> [UInt8] {
        (try? JSONEncoding.encode(self, format: [.prettyPrinted, .sortedKeys])) ?? []
    }

    /// Largest number of modems one world holds (bearer addresses 100.64.23.10 … .41).
    public static let maximumModems = 32

    /// Checks every field's range and format; throws `.dataError` naming the first bad field.
    public func validate(source: String = "scenario") throws {
        do {
            try check()
        } catch {
            throw CellpathError(.dataError, "\(source): \(error.field): \(error.problem)", hint: Self.formatHint)
        }
    }

    // MARK: - Reading

    private static func read(_ root: JSONNode, _ positions: FieldPositions) throws(ScenarioProblem) -> Scenario {
        let o = try ObjectReader(root, path: "", keys: keys(CodingKeys.self), positions: positions)
        var scenario = Scenario()
        if let modems = try o.array(
            "modems",
            { (index, node, path) throws(ScenarioProblem) in
                try o.element(node, path: path, keys: keys(SimulatedModem.CodingKeys.self)) {
                    m throws(ScenarioProblem) in
                    try SimulatedModem.read(m, index: index)
                }
            })
        {
            scenario.modems = modems
        }
        if let path = try o.object(
            "cellularPath", keys: keys(LinkConditions.CodingKeys.self),
            { p throws(ScenarioProblem) in
                try LinkConditions.read(p, defaultDelayMs: scenario.cellularPath.delayMs)
            })
        {
            scenario.cellularPath = path
        }
        if let path = try o.object(
            "wifiPath", keys: keys(LinkConditions.CodingKeys.self),
            { p throws(ScenarioProblem) in
                try LinkConditions.read(p, defaultDelayMs: scenario.wifiPath.delayMs)
            })
        {
            scenario.wifiPath = path
        }
        if let api = try o.object("api", keys: keys(APIFaults.CodingKeys.self), APIFaults.read) { scenario.api = api }
        if let carrier = try o.object("carrier", keys: keys(CarrierFaults.CodingKeys.self), CarrierFaults.read) {
            scenario.carrier = carrier
        }
        if let providers = try o.object(
            "providers", keys: keys(ProviderFaults.CodingKeys.self), ProviderFaults.read)
        {
            scenario.providers = providers
        }
        if let value = try o.bool("modemManager") { scenario.modemManager = value }
        if let events = try o.array(
            "events",
            { (index, node, path) throws(ScenarioProblem) in
                try o.element(node, path: path, keys: keys(ScenarioEvent.CodingKeys.self)) {
                    e throws(ScenarioProblem) in
                    try ScenarioEvent.read(e, index: index)
                }
            })
        {
            scenario.events = events
        }
        return scenario
    }

    // MARK: - Validation

    /// Every field's range and format, and the rules across modems.
    private func check() throws(ScenarioProblem) {
        func bad(_ field: String, _ problem: String) -> ScenarioProblem {
            ScenarioProblem(field: field, problem: problem)
        }
        if modems.isEmpty { throw bad("modems", "at least one modem is required") }
        if modems.count > Self.maximumModems {
            throw bad("modems", "at most \(Self.maximumModems) modems are supported, got \(modems.count)")
        }
        var msisdns: [String: Int] = [:]
        for (i, modem) in modems.enumerated() {
            let m = "modems[\(i)]"
            if !Self.isDigits(modem.imei, count: 15 ... 15) { throw bad("\(m).imei", "must be 15 digits") }
            if modem.apn.isEmpty || modem.apn.count > 100 { throw bad("\(m).apn", "must be 1 to 100 characters") }
            for (name, value) in [
                ("manufacturer", modem.manufacturer), ("model", modem.model), ("firmware", modem.firmware)
            ]
            where value.isEmpty || value.count > 64 || value.contains(where: { $0.isNewline }) {
                throw bad("\(m).\(name)", "must be 1 to 64 characters on one line")
            }
            for (s, sim) in [("\(m).sim", modem.sim), ("\(m).secondSlot.sim", modem.secondSlot?.sim)] {
                guard let sim else { continue }
                if !Self.isDigits(sim.iccid, count: 18 ... 20) { throw bad("\(s).iccid", "must be 18 to 20 digits") }
                if !Self.isDigits(sim.imsi, count: 6 ... 15) { throw bad("\(s).imsi", "must be 6 to 15 digits") }
                if !sim.msisdn.hasPrefix("+") || !Self.isDigits(String(sim.msisdn.dropFirst()), count: 7 ... 15) {
                    throw bad("\(s).msisdn", "must be E.164 with a leading '+', e.g. +447940448591")
                }
                if let other = msisdns[sim.msisdn] {
                    throw bad(
                        "\(s).msisdn",
                        "\(sim.msisdn) is also the number of modems[\(other)].sim (each SIM needs its own)")
                }
                msisdns[sim.msisdn] = i
                if !Self.isDigits(sim.pin, count: 4 ... 8) { throw bad("\(s).pin", "must be 4 to 8 digits") }
                if !(0 ... 3).contains(sim.pinAttemptsLeft) { throw bad("\(s).pinAttemptsLeft", "must be 0 to 3") }
                if let minutes = sim.simChangedMinutesAgo, minutes < 0 {
                    throw bad("\(s).simChangedMinutesAgo", "must not be negative")
                }
            }
            for (n, network) in [
                ("\(m).network", modem.network), ("\(m).secondSlot.network", modem.secondSlot?.network)
            ] {
                guard let network else { continue }
                if !Self.isDigits(network.mcc, count: 3 ... 3) { throw bad("\(n).mcc", "must be 3 digits") }
                if !Self.isDigits(network.mnc, count: 2 ... 3) { throw bad("\(n).mnc", "must be 2 or 3 digits") }
                if network.operatorName.isEmpty || network.operatorName.count > 64 {
                    throw bad("\(n).operatorName", "must be 1 to 64 characters")
                }
                if !(-130 ... -20).contains(network.rssiDbm) {
                    throw bad("\(n).rssiDbm", "must be between -130 and -20 dBm")
                }
                if network.cells.isEmpty { throw bad("\(n).cells", "must hold at least one cell") }
                for (c, cell) in network.cells.enumerated() {
                    if let (field, problem) = cell.problem { throw bad("\(n).cells[\(c)].\(field)", problem) }
                }
            }
            let f = "\(m).faults"
            if let code = modem.faults.connectRejectCode, code < 0 {
                throw bad("\(f).connectRejectCode", "must not be negative")
            }
            if let after = modem.faults.dropBearerAfterSeconds, after < 1 {
                throw bad("\(f).dropBearerAfterSeconds", "must be at least 1")
            }
            if !(0 ... 60_000).contains(modem.faults.responseDelayMs) {
                throw bad("\(f).responseDelayMs", "must be 0 to 60000")
            }
            if !(0 ... 100).contains(modem.faults.garbageFrames) { throw bad("\(f).garbageFrames", "must be 0 to 100") }
            if !(0 ... 60_000).contains(modem.faults.slowAfterResetMs) {
                throw bad("\(f).slowAfterResetMs", "must be 0 to 60000")
            }
            if !(1 ... 3600).contains(modem.faults.slowAfterResetSeconds) {
                throw bad("\(f).slowAfterResetSeconds", "must be 1 to 3600")
            }
            if let reported = modem.reportedIP {
                let r = "\(m).reportedIP"
                if let address = reported.ipv4Address, IPAddress.ipv4Bytes(address) == nil {
                    throw bad("\(r).ipv4Address", "must be a numeric IPv4 address")
                }
                if let address = reported.ipv6Address, IPAddress.ipv6Bytes(address) == nil {
                    throw bad("\(r).ipv6Address", "must be a numeric IPv6 address")
                }
                if let servers = reported.dnsServers {
                    if let bad = servers.firstIndex(where: { !IPAddress.isNumeric($0) }) {
                        throw ScenarioProblem(
                            field: "\(r).dnsServers[\(bad)]", problem: "must be a numeric IPv4 or IPv6 address")
                    }
                    if servers.filter({ $0.contains(":") }).count > 2 || servers.filter({ !$0.contains(":") }).count > 2
                    {
                        throw bad("\(r).dnsServers", "at most 2 servers of each family (what QMI carries)")
                    }
                }
                if let mtu = reported.mtu, !(0 ... 4_294_967_295).contains(mtu) {
                    throw bad("\(r).mtu", "must be 0 to 4294967295")
                }
            }
            if !(1 ... 2).contains(modem.activeSlot) { throw bad("\(m).activeSlot", "must be 1 or 2") }
            if modem.activeSlot == 2 && modem.secondSlot == nil { throw bad("\(m).activeSlot", "2 needs a secondSlot") }
            if modem.secondSlot != nil && modem.profile.controlProtocol == nil {
                throw bad(
                    "\(m).secondSlot", "device \(modem.device.rawValue) has no MBIM or QMI port to switch slots through"
                )
            }
            if modem.nat64 && modem.ipType != .ipv6 {
                throw bad(
                    "\(m).nat64",
                    "needs \"ipType\": \"ipv6\" (a NAT64 network hands out IPv6-only bearers), got \"\(modem.ipType.rawValue)\""
                )
            }
        }
        // NAT64/DNS64 is the carrier's, for every IPv6 bearer of the world.
        if let first = modems.firstIndex(where: \.nat64),
            let other = modems.firstIndex(where: { $0.ipType.carriesIPv6 && !$0.nat64 })
        {
            throw bad(
                "modems[\(other)].nat64",
                "must be true as for modems[\(first)]: the carrier runs NAT64/DNS64 for every IPv6 bearer of the world")
        }
        for (name, path) in [("cellularPath", cellularPath), ("wifiPath", wifiPath)] {
            for (suffix, values) in [
                ("", DirectionOverride(delayMs: path.delayMs, jitterMs: path.jitterMs, lossPercent: path.lossPercent)),
                (".uplink", path.uplink), (".downlink", path.downlink)
            ] {
                guard let values else { continue }
                if let v = values.delayMs, !(0 ... 10_000).contains(v) {
                    throw bad("\(name)\(suffix).delayMs", "must be 0 to 10000")
                }
                if let v = values.jitterMs, !(0 ... 10_000).contains(v) {
                    throw bad("\(name)\(suffix).jitterMs", "must be 0 to 10000")
                }
                if let v = values.lossPercent, !(0 ... 100).contains(v) || v.isNaN {
                    throw bad("\(name)\(suffix).lossPercent", "must be 0 to 100")
                }
            }
        }
        if let status = api.serverErrorStatus, !(500 ... 599).contains(status) {
            throw bad("api.serverErrorStatus", "must be a 5xx status")
        }
        if !(0 ... 600_000).contains(api.slowMs) { throw bad("api.slowMs", "must be 0 to 600000") }
        if let after = api.rateLimitRetryAfter, !(0 ... 86_400).contains(after) {
            throw bad("api.rateLimitRetryAfter", "must be 0 to 86400 seconds")
        }
        if let every = api.faultEvery, !(2 ... 1_000_000).contains(every) {
            throw bad("api.faultEvery", "must be 2 to 1000000 (null = every request)")
        }
        if let limit = api.rateLimitPerHour, !(1 ... 1_000_000_000).contains(limit) {
            throw bad("api.rateLimitPerHour", "must be 1 to 1000000000 (null = unlimited)")
        }
        if !(1 ... 86_400).contains(api.checkTTLSeconds) { throw bad("api.checkTTLSeconds", "must be 1 to 86400") }
        if !(1 ... 86_400).contains(api.tokenLifetimeSeconds) {
            throw bad("api.tokenLifetimeSeconds", "must be 1 to 86400")
        }
        if !(10 ... 1_000_000).contains(api.retainedChecks) { throw bad("api.retainedChecks", "must be 10 to 1000000") }
        if let url = api.callbackURL, !Self.isCallbackURL(url) {
            throw bad(
                "api.callbackURL",
                "must be an http:// URL with a numeric IPv4 host, e.g. http://192.0.2.23:8080/callback")
        }
        var refused: Set<String> = []
        for (i, entry) in api.checkURLErrors.enumerated() {
            let parts = entry.operator.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, Self.isDigits(parts[0], count: 3 ... 3), Self.isDigits(parts[1], count: 2 ... 3)
            else {
                throw bad("api.checkURLErrors[\(i)].operator", "must be MCC-MNC, e.g. 001-01")
            }
            if !refused.insert(entry.operator).inserted {
                throw bad("api.checkURLErrors[\(i)].operator", "\(entry.operator) is listed twice")
            }
        }
        if !(0 ... 50).contains(carrier.extraHops) { throw bad("carrier.extraHops", "must be 0 to 50") }
        try checkEvents(msisdns: msisdns)
    }

    /// The events' times, modems and arguments; suspend and resume alternate, suspend first.
    private func checkEvents(msisdns: [String: Int]) throws(ScenarioProblem) {
        func bad(_ field: String, _ problem: String) -> ScenarioProblem {
            ScenarioProblem(field: field, problem: problem)
        }
        for (i, event) in events.enumerated() {
            let e = "events[\(i)]"
            if !(0 ... 86_400).contains(event.atSeconds) { throw bad("\(e).atSeconds", "must be 0 to 86400") }
            if event.event != .suspend && event.event != .resume {
                guard modems.indices.contains(event.modem) else {
                    throw bad("\(e).modem", "must be a modem of this world, 0 to \(modems.count - 1)")
                }
                if modems[event.modem].profile.controlProtocol == nil {
                    throw bad("\(e).modem", "modem \(event.modem) has no MBIM or QMI port to take events through")
                }
            }
            if event.event == .swapSIM {
                guard let sim = event.sim else { throw bad("\(e).sim", "swapSIM needs the SIM inserted") }
                if !Self.isDigits(sim.iccid, count: 18 ... 20) {
                    throw bad("\(e).sim.iccid", "must be 18 to 20 digits")
                }
                if !Self.isDigits(sim.imsi, count: 6 ... 15) { throw bad("\(e).sim.imsi", "must be 6 to 15 digits") }
                if !sim.msisdn.hasPrefix("+") || !Self.isDigits(String(sim.msisdn.dropFirst()), count: 7 ... 15) {
                    throw bad("\(e).sim.msisdn", "must be E.164 with a leading '+', e.g. +447940448591")
                }
                if let other = msisdns[sim.msisdn], other != event.modem {
                    throw bad("\(e).sim.msisdn", "\(sim.msisdn) is the number of modems[\(other)].sim")
                }
            }
            if let servers = event.dnsServers,
                let index = servers.firstIndex(where: {
                    IPAddress.ipv4Bytes($0) == nil
                        && IPAddress.ipv6Bytes($0) == nil
                })
            {
                throw bad("\(e).dnsServers[\(index)]", "must be a numeric IPv4 or IPv6 address")
            }
            if event.event == .handover {
                let cells = modems[event.modem].network.cells.count
                guard let cell = event.cell, (0 ..< cells).contains(cell) else {
                    throw bad("\(e).cell", "handover needs a cell of modem \(event.modem)'s network, 0 to \(cells - 1)")
                }
            }
            if let ms = event.slowMs, !(0 ... 60_000).contains(ms) { throw bad("\(e).slowMs", "must be 0 to 60000") }
            if let seconds = event.slowSeconds, !(1 ... 3600).contains(seconds) {
                throw bad("\(e).slowSeconds", "must be 1 to 3600")
            }
        }
        var asleep = false
        for (i, event) in events.enumerated().sorted(by: { $0.element.atSeconds < $1.element.atSeconds })
        where event.event == .suspend || event.event == .resume {
            if (event.event == .suspend) == asleep {
                throw bad(
                    "events[\(i)].event",
                    asleep ? "the machine is already suspended then" : "the machine is not suspended then")
            }
            asleep.toggle()
        }
    }

    /// `http://IPv4[:port][/path]` without spaces or control characters: where the simulator can
    /// deliver webhooks (it resolves no names).
    private static func isCallbackURL(_ url: String) -> Bool {
        guard url.count <= 2000, url.hasPrefix("http://"),
            !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
        else { return false }
        let authority = url.dropFirst("http://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard IPAddress.ipv4Bytes(parts[0]) != nil else { return false }
        return parts.count == 1 || UInt16(parts[1]).map { $0 > 0 } == true
    }

    static func isDigits(_ value: String, count: ClosedRange<Int>) -> Bool {
        count.contains(value.utf8.count) && value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}

/// The JSON keys of a scenario object: its coding keys.
func keys<K: CodingKey & CaseIterable>(_: K.Type) -> [String] { K.allCases.map(\.stringValue) }

extension SimulatedModem {
    /// Modem `index` from its object; absent fields keep `SimulatedModem(index:)`'s values, and
    /// `"sim": null` means no SIM inserted.
    fileprivate static func read(_ o: ObjectReader, index: Int) throws(ScenarioProblem) -> SimulatedModem {
        var modem = SimulatedModem(index: index)
        if let value = try o.choice("device", DeviceProfile.Name.self) {
            guard value != .captured else {
                throw ScenarioProblem(field: o.field("device"), problem: "\"captured\" is given by a deviceShape")
            }
            modem.device = value
        }
        if let shape = try o.object(
            "deviceShape", keys: DeviceShape.CodingKeys.allCases.map(\.stringValue), DeviceCapture.readShape)
        {
            if o.contains("device") {
                throw ScenarioProblem(
                    field: o.field("deviceShape"), problem: "a modem has a device or a deviceShape, not both")
            }
            do throws(ScenarioProblem) {
                modem.capturedProfile = try DeviceProfile(captured: shape)
            } catch {
                throw ScenarioProblem(field: o.field("deviceShape.\(error.field)"), problem: error.problem)
            }
            modem.device = .captured
        }
        if modem.device != .simulated { modem.adopt(modem.profile) }
        if let value = try o.choice("protocol", ModemProtocol.self) {
            if modem.device != .simulated, value != modem.profile.controlProtocol {
                let speaks = modem.profile.controlProtocol.map { "speaks \($0.rawValue)" } ?? "has no MBIM or QMI port"
                throw ScenarioProblem(
                    field: "modems[\(index)].protocol",
                    problem: "device \(modem.device.rawValue) \(speaks); leave protocol out or match it")
            }
            modem.protocol = value
        }
        if let value = try o.string("imei") { modem.imei = value }
        if let value = try o.string("manufacturer") { modem.manufacturer = value }
        if let value = try o.string("model") { modem.model = value }
        if let value = try o.string("firmware") { modem.firmware = value }
        if o.contains("sim") {
            modem.sim = try o.object("sim", keys: keys(SimulatedSIM.CodingKeys.self), nullable: true) {
                s throws(ScenarioProblem) in
                try SimulatedSIM.read(s, index: index)
            }
        }
        if let value = try o.object("network", keys: keys(SimulatedNetwork.CodingKeys.self), SimulatedNetwork.read) {
            modem.network = value
        }
        if let value = try o.string("apn") { modem.apn = value }
        if let value = try o.choice("ipType", BearerIPType.self) { modem.ipType = value }
        if let value = try o.bool("nat64") { modem.nat64 = value }
        if let value = try o.bool("modemManagerIgnore") { modem.modemManagerIgnore = value }
        if let value = try o.object("faults", keys: keys(ModemFaults.CodingKeys.self), ModemFaults.read) {
            modem.faults = value
        }
        modem.reportedIP = try o.object(
            "reportedIP", keys: keys(ReportedIPConfiguration.CodingKeys.self), nullable: true,
            ReportedIPConfiguration.read)
        if o.contains("secondSlot") {
            modem.secondSlot = try o.object("secondSlot", keys: keys(SecondSIMSlot.CodingKeys.self), nullable: true) {
                s throws(ScenarioProblem) in try SecondSIMSlot.read(s, index: index)
            }
        }
        if let value = try o.int("activeSlot") { modem.activeSlot = value }
        modem.gnss = try o.object("gnss", keys: keys(SimulatedGNSS.CodingKeys.self), nullable: true, SimulatedGNSS.read)
        return modem
    }
}

extension ScenarioEvent {
    fileprivate static func read(_ o: ObjectReader, index: Int) throws(ScenarioProblem) -> ScenarioEvent {
        guard let at = try o.int("atSeconds") else {
            throw ScenarioProblem(field: "events[\(index)].atSeconds", problem: "is required")
        }
        guard let kind = try o.choice("event", Kind.self) else {
            throw ScenarioProblem(field: "events[\(index)].event", problem: "is required")
        }
        var event = ScenarioEvent(atSeconds: at, event: kind, modem: try o.int("modem") ?? 0)
        if let value = try o.bool("renumber") { event.renumber = value }
        event.slowMs = try o.int("slowMs", nullable: true)
        event.slowSeconds = try o.int("slowSeconds", nullable: true)
        let simKeys = keys(SimulatedSIM.CodingKeys.self)
        event.sim = try o.object("sim", keys: simKeys, nullable: true) { s throws(ScenarioProblem) in
            try SimulatedSIM.read(s, index: event.modem)
        }
        event.cell = try o.int("cell")
        event.dnsServers = try o.array("dnsServers") { (_, node, path) throws(ScenarioProblem) in
            guard case .string(let text) = node.value else {
                throw ScenarioProblem(field: path, problem: "must be a string")
            }
            return text
        }
        return event
    }
}

extension SecondSIMSlot {
    /// A second slot from its object: an eSIM unless `"esim": false`; `"sim"` absent or null: no SIM
    /// (no enabled eSIM profile); `{}` a SIM with the defaults of a modem `index + 100`.
    fileprivate static func read(_ o: ObjectReader, index: Int) throws(ScenarioProblem) -> SecondSIMSlot {
        var slot = SecondSIMSlot()
        if let value = try o.bool("esim") { slot.esim = value }
        slot.sim = try o.object("sim", keys: keys(SimulatedSIM.CodingKeys.self), nullable: true) {
            s throws(ScenarioProblem) in
            try SimulatedSIM.read(s, index: index + Scenario.maximumModems)
        }
        slot.network = try o.object("network", keys: keys(SimulatedNetwork.CodingKeys.self), SimulatedNetwork.read)
        return slot
    }
}

extension SimulatedGNSS {
    /// `lat` and `lon` required, within the globe's ranges; `accuracy` and `ageSeconds` not negative.
    fileprivate static func read(_ o: ObjectReader) throws(ScenarioProblem) -> SimulatedGNSS {
        guard let lat = try o.number("lat"), (-90 ... 90).contains(lat) else {
            throw ScenarioProblem(field: o.field("lat"), problem: "is required: a latitude from -90 to 90")
        }
        guard let lon = try o.number("lon"), (-180 ... 180).contains(lon) else {
            throw ScenarioProblem(field: o.field("lon"), problem: "is required: a longitude from -180 to 180")
        }
        var gnss = SimulatedGNSS(lat: lat, lon: lon)
        for (key, value) in [("accuracy", \SimulatedGNSS.accuracy), ("ageSeconds", \.ageSeconds)] {
            guard let given = try o.number(key) else { continue }
            guard given >= 0 else { throw ScenarioProblem(field: o.field(key), problem: "must not be negative") }
            gnss[keyPath: value] = given
        }
        return gnss
    }
}

extension ReportedIPConfiguration {
    fileprivate static func read(_ o: ObjectReader) throws(ScenarioProblem) -> ReportedIPConfiguration {
        ReportedIPConfiguration(
            ipv4Address: try o.string("ipv4Address", nullable: true),
            ipv6Address: try o.string("ipv6Address", nullable: true),
            dnsServers: try o.array("dnsServers") { (_, node, path) throws(ScenarioProblem) in
                guard case .string(let text) = node.value else {
                    throw ScenarioProblem(field: path, problem: "must be a string")
                }
                return text
            },
            mtu: try o.int("mtu", nullable: true))
    }
}

extension SimulatedSIM {
    fileprivate static func read(_ o: ObjectReader, index: Int) throws(ScenarioProblem) -> SimulatedSIM {
        var sim = SimulatedSIM(index: index)
        if let value = try o.string("iccid") { sim.iccid = value }
        if let value = try o.string("imsi") { sim.imsi = value }
        if let value = try o.string("msisdn") { sim.msisdn = value }
        if let value = try o.bool("pinLocked") { sim.pinLocked = value }
        if let value = try o.string("pin") { sim.pin = value }
        if let value = try o.int("pinAttemptsLeft") { sim.pinAttemptsLeft = value }
        sim.simChangedMinutesAgo = try o.int("simChangedMinutesAgo", nullable: true)
        return sim
    }
}

extension SimulatedNetwork {
    fileprivate static func read(_ o: ObjectReader) throws(ScenarioProblem) -> SimulatedNetwork {
        var network = SimulatedNetwork()
        if let value = try o.string("mcc") { network.mcc = value }
        if let value = try o.string("mnc") { network.mnc = value }
        if let value = try o.string("operatorName") { network.operatorName = value }
        if let value = try o.bool("roaming") { network.roaming = value }
        if let value = try o.int("rssiDbm") { network.rssiDbm = value }
        network.checkURLError = try o.choice("checkURLError", CheckURLError.self, nullable: true)
        network.cells = [SimulatedCell(rssiDbm: network.rssiDbm)]
        if let cells = try o.array(
            "cells",
            { (_, node, path) throws(ScenarioProblem) in
                try o.element(node, path: path, keys: keys(SimulatedCell.CodingKeys.self), SimulatedCell.read)
            })
        {
            network.cells = cells
        }
        return network
    }
}

extension SimulatedCell {
    fileprivate static func read(_ o: ObjectReader) throws(ScenarioProblem) -> SimulatedCell {
        var cell = SimulatedCell()
        if let value = try o.choice("rat", Technology.self) { cell.rat = value }
        if let value = try o.int("cellId") { cell.cellId = value }
        if let value = try o.int("tac") { cell.tac = value }
        if let value = try o.int("pci") { cell.pci = value }
        if o.contains("band") { cell.band = try o.int("band", nullable: true) }
        if let value = try o.int("channel") { cell.channel = value }
        if let value = try o.int("rssiDbm") { cell.rssiDbm = value }
        if let value = try o.int("rsrpDbm") { cell.rsrpDbm = value }
        if let value = try o.int("rsrqDb") { cell.rsrqDb = value }
        if let value = try o.number("sinrDb") { cell.sinrDb = value }
        cell.mcc = try o.string("mcc")
        cell.mnc = try o.string("mnc")
        cell.operatorName = try o.string("operatorName")
        cell.gnss = try o.object("gnss", keys: keys(SimulatedGNSS.CodingKeys.self), nullable: true, SimulatedGNSS.read)
        return cell
    }
}

extension LinkConditions {
    /// A path's conditions; an absent `delayMs` keeps the path's default.
    fileprivate static func read(_ o: ObjectReader, defaultDelayMs: Int) throws(ScenarioProblem) -> LinkConditions {
        let keys = keys(DirectionOverride.CodingKeys.self)
        return LinkConditions(
            delayMs: try o.int("delayMs") ?? defaultDelayMs, jitterMs: try o.int("jitterMs") ?? 0,
            lossPercent: try o.number("lossPercent") ?? 0,
            uplink: try o.object("uplink", keys: keys, nullable: true, DirectionOverride.read),
            downlink: try o.object("downlink", keys: keys, nullable: true, DirectionOverride.read))
    }
}

extension DirectionOverride {
    fileprivate static func read(_ o: ObjectReader) throws(ScenarioProblem) -> DirectionOverride {
        DirectionOverride(
            delayMs: try o.int("delayMs"), jitterMs: try o.int("jitterMs"), lossPercent: try o.number("lossPercent"))
    }
}

extension ModemFaults {
    fileprivate static func read(_ o: ObjectReader) throws(ScenarioProblem) -> ModemFaults {
        var faults = ModemFaults()
        if let value = try o.bool("radioOff") { faults.radioOff = value }
        if let value = try o.choice("registration", RegistrationFault.self) { faults.registration = value }
        faults.connectRejectCode = try o.int("connectRejectCode", nullable: true)
        faults.dropBearerAfterSeconds = try o.int("dropBearerAfterSeconds", nullable: true)
        if let value = try o.int("responseDelayMs") { faults.responseDelayMs = value }
        if let value = try o.int("garbageFrames") { faults.garbageFrames = value }
        if let value = try o.int("slowAfterResetMs") { faults.slowAfterResetMs = value }
        if let value = try o.int("slowAfterResetSeconds") { faults.slowAfterResetSeconds = value }
        return faults
    }
}

extension APIFaults {
    fileprivate static func read(_ o: ObjectReader) throws(ScenarioProblem) -> APIFaults {
        var faults = APIFaults()
        faults.serverErrorStatus = try o.int("serverErrorStatus", nullable: true)
        if let value = try o.int("slowMs") { faults.slowMs = value }
        if let value = try o.bool("malformedJSON") { faults.malformedJSON = value }
        faults.rateLimitRetryAfter = try o.int("rateLimitRetryAfter", nullable: true)
        faults.faultEvery = try o.int("faultEvery", nullable: true)
        if o.contains("rateLimitPerHour") { faults.rateLimitPerHour = try o.int("rateLimitPerHour", nullable: true) }
        if let value = try o.bool("sandbox") { faults.sandbox = value }
        if let value = try o.int("checkTTLSeconds") { faults.checkTTLSeconds = value }
        if let value = try o.int("tokenLifetimeSeconds") { faults.tokenLifetimeSeconds = value }
        if let value = try o.int("retainedChecks") { faults.retainedChecks = value }
        faults.callbackURL = try o.string("callbackURL", nullable: true)
        if let errors = try o.array(
            "checkURLErrors",
            { (_, node, path) throws(ScenarioProblem) in
                try o.element(node, path: path, keys: keys(OperatorCheckURLError.CodingKeys.self)) {
                    e throws(ScenarioProblem) in
                    guard let op = try e.string("operator") else {
                        throw ScenarioProblem(field: e.field("operator"), problem: "is required")
                    }
                    guard let error = try e.choice("error", CheckURLError.self) else {
                        throw ScenarioProblem(field: e.field("error"), problem: "is required")
                    }
                    return OperatorCheckURLError(operator: op, error: error)
                }
            })
        {
            faults.checkURLErrors = errors
        }
        return faults
    }
}

extension CarrierFaults {
    fileprivate static func read(_ o: ObjectReader) throws(ScenarioProblem) -> CarrierFaults {
        var faults = CarrierFaults()
        if let value = try o.bool("timeout") { faults.timeout = value }
        if let value = try o.bool("requireCookies") { faults.requireCookies = value }
        if let value = try o.bool("relativeLocation") { faults.relativeLocation = value }
        if let value = try o.int("extraHops") { faults.extraHops = value }
        if let value = try o.bool("redirectLoop") { faults.redirectLoop = value }
        if let value = try o.bool("httpsDowngrade") { faults.httpsDowngrade = value }
        return faults
    }
}
