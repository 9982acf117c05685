/// A cell the modem can camp on (`network.cells[i]`): what the modem reports of its serving
/// cell's identity and signal. A value left null is one the modem does not report.
public struct SimulatedCell: Sendable, Equatable, Encodable {
    /// The technologies a simulated cell can have.
    public enum Technology: String, Sendable, Equatable, Codable, CaseIterable {
        case lte, umts
    }

    public var rat: Technology
    /// The E-UTRAN cell id (28 bits), or the UMTS cell id.
    public var cellId: Int
    /// TAC on LTE, LAC on UMTS.
    public var tac: Int
    /// The physical cell id (LTE).
    public var pci: Int
    /// The band number: E-UTRA band on LTE (3 for B3), the UMTS band (1 for 2100 MHz).
    public var band: Int?
    /// EARFCN on LTE, UARFCN on UMTS.
    public var channel: Int
    public var rssiDbm: Int
    public var rsrpDbm: Int
    public var rsrqDb: Int
    public var sinrDb: Double
    /// The cell's operator (MCC, MNC and name) when it is not the network's: a drive across two
    /// operators. Nil: the network's.
    public var mcc: String? = nil
    public var mnc: String? = nil
    public var operatorName: String? = nil
    /// Where the modem is while it camps on this cell: its receiver's fix then, instead of the
    /// modem's `gnss` (a drive moves). Nil: the modem's.
    public var gnss: SimulatedGNSS? = nil

    public init(
        rat: Technology = .lte, cellId: Int = 0x01A2_D001, tac: Int = 0x2A11, pci: Int = 101, band: Int? = 3,
        channel: Int = 1300, rssiDbm: Int = -71, rsrpDbm: Int = -95, rsrqDb: Int = -9, sinrDb: Double = 13
    ) {
        self.rat = rat
        self.cellId = cellId
        self.tac = tac
        self.pci = pci
        self.band = band
        self.channel = channel
        self.rssiDbm = rssiDbm
        self.rsrpDbm = rsrpDbm
        self.rsrqDb = rsrqDb
        self.sinrDb = sinrDb
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case rat, cellId, tac, pci, band, channel, rssiDbm, rsrpDbm, rsrqDb, sinrDb, mcc, mnc, operatorName, gnss
    }

    /// Every field, a band not reported as null (so that the daemon's copy keeps it unreported).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(rat, forKey: .rat)
        try c.encode(cellId, forKey: .cellId)
        try c.encode(tac, forKey: .tac)
        try c.encode(pci, forKey: .pci)
        try c.encode(band, forKey: .band)
        try c.encode(channel, forKey: .channel)
        try c.encode(rssiDbm, forKey: .rssiDbm)
        try c.encode(rsrpDbm, forKey: .rsrpDbm)
        try c.encode(rsrqDb, forKey: .rsrqDb)
        try c.encode(sinrDb, forKey: .sinrDb)
        try c.encodeIfPresent(mcc, forKey: .mcc)
        try c.encodeIfPresent(mnc, forKey: .mnc)
        try c.encodeIfPresent(operatorName, forKey: .operatorName)
        try c.encodeIfPresent(gnss, forKey: .gnss)
    }

    /// The problem with the cell's values, if any: a field name and what it must be.
    public var problem: (field: String, problem: String)? {
        if !(0 ..< 1 << 28).contains(cellId) { return ("cellId", "must be 0 to 268435455") }
        if !(0 ... 0xffff).contains(tac) { return ("tac", "must be 0 to 65535") }
        if !(0 ... 503).contains(pci) { return ("pci", "must be 0 to 503") }
        if let band, !(1 ... 255).contains(band) { return ("band", "must be 1 to 255") }
        if !(0 ... 0xffff).contains(channel) { return ("channel", "must be 0 to 65535") }
        if !(-130 ... -20).contains(rssiDbm) { return ("rssiDbm", "must be between -130 and -20 dBm") }
        if !(-156 ... -31).contains(rsrpDbm) { return ("rsrpDbm", "must be between -156 and -31 dBm") }
        if !(-34 ... -3).contains(rsrqDb) { return ("rsrqDb", "must be between -34 and -3 dB") }
        if !(-23 ... 40).contains(sinrDb) { return ("sinrDb", "must be between -23 and 40 dB") }
        if (mcc == nil) != (mnc == nil) {
            return (mcc == nil ? "mcc" : "mnc", "must be given with \(mcc == nil ? "mnc" : "mcc")")
        }
        if let mcc, !Scenario.isDigits(mcc, count: 3 ... 3) { return ("mcc", "must be 3 digits") }
        if let mnc, !Scenario.isDigits(mnc, count: 2 ... 3) { return ("mnc", "must be 2 or 3 digits") }
        return nil
    }
}

extension SimulatedNetwork {
    /// The network as the modem sees it while it camps on cell `index` of `cells`: that cell's
    /// operator where it has one of its own.
    public func serving(cell index: Int) -> SimulatedNetwork {
        guard cells.indices.contains(index) else { return self }
        let cell = cells[index]
        var serving = self
        if let mcc = cell.mcc, let mnc = cell.mnc {
            serving.mcc = mcc
            serving.mnc = mnc
            serving.operatorName = cell.operatorName ?? mcc + mnc
        } else if let name = cell.operatorName {
            serving.operatorName = name
        }
        return serving
    }
}

extension SimulatedModem {
    /// The network the SIM in `slot` registers on while the modem camps on cell `cell`: the second
    /// slot's own where it has one, else the modem's as it is on that cell.
    public func network(slot: Int, cell: Int) -> SimulatedNetwork {
        if slot == 2, let second = secondSlot?.network { return second }
        return network.serving(cell: cell)
    }
}
