/// The radio a check ran on, as the modem told it while the check_url chain ran: technology,
/// serving network, serving cell and signal. Nil where the modem did not tell a value (its
/// protocol has no such report, or the modem does not support it): never guessed.
public struct RadioContext: Sendable, Equatable {
    /// Who read it: `mbim`, `qmi` or `modemmanager`.
    public var source: String
    public var accessTechnology: AccessTechnology?
    /// The serving network (MCC-MNC and name).
    public var servingOperator: NetworkOperator?
    public var roaming: Bool?
    /// The serving cell's identity: the E-UTRAN cell id (28 bits), the NR cell id (36 bits), or
    /// the GSM/UMTS cell id.
    public var cellID: UInt64?
    /// The tracking area code (LTE, 5G NR) or location area code (GSM, UMTS).
    public var areaCode: Int?
    /// The physical cell id (LTE, 5G NR).
    public var physicalCellID: Int?
    /// The band: `B3` (E-UTRA), `n78` (NR), `UMTS-1`.
    public var band: String?
    /// The serving cell's channel: EARFCN (LTE), NR-ARFCN (5G NR), UARFCN (UMTS) or ARFCN (GSM).
    public var channel: Int?
    public var rssiDbm: Double?
    public var rsrpDbm: Double?
    public var rsrqDb: Double?
    public var sinrDb: Double?
    /// 5G NR: the SS-RSRP and SS-SINR of the NR leg.
    public var ssRsrpDbm: Double?
    public var ssSinrDb: Double?

    public init(source: String) {
        self.source = source
    }

    /// What the registration tells (what every backend can read): technology, serving network,
    /// roaming.
    public init(source: String, registration: Registration?) {
        self.source = source
        if let registration, registration.isRegistered {
            accessTechnology = registration.accessTechnology
            servingOperator = registration.servingOperator
            roaming = registration.state == .roaming
        }
    }

    /// The E-UTRA band of an EARFCN (3GPP TS 36.101 table 5.7.3-1, the FDD and TDD bands in
    /// use), as `B3`; nil outside them.
    public static func lteBand(earfcn: Int) -> String? {
        let firstEARFCNs: [(band: Int, first: Int, last: Int)] = [
            (1, 0, 599), (2, 600, 1199), (3, 1200, 1949), (4, 1950, 2399), (5, 2400, 2649), (7, 2750, 3449),
            (8, 3450, 3799), (12, 5010, 5179), (13, 5180, 5279), (14, 5280, 5379), (17, 5730, 5849),
            (18, 5850, 5999), (19, 6000, 6149), (20, 6150, 6449), (25, 8040, 8689), (26, 8690, 9039),
            (28, 9210, 9659), (38, 37750, 38249), (40, 38650, 39649), (41, 39650, 41589), (42, 41590, 43589),
            (66, 66436, 67335), (71, 68586, 68935)
        ]
        return firstEARFCNs.first { (($0.first) ... ($0.last)).contains(earfcn) }.map { "B\($0.band)" }
    }
}
