/// What a modem's firmware negotiated or refuses beyond its status, read for a device capture
/// (`doctor --capture`); nil where it was not read (another protocol, another backend).
public struct FirmwareTraits: Sendable, Equatable {
    /// MBIM: the MBIMEx version the device speaks now (0 for MBIM 1.0, 2, 3), as another client
    /// of mbim-proxy negotiated it; nil when the port was opened directly (OPEN resets it).
    public var mbimExtensions: Int?
    /// QMI: the WDA data format now: a raw-ip link layer (else 802.3), QMAP data aggregation on.
    public var qmiRawIP: Bool?
    public var qmiDataAggregation: Bool?
    /// QMI: DMS refused the UIM commands (InvalidQmiCommand), the SIM was read through UIM.
    public var qmiDMSUIMRefused: Bool?

    public init(
        mbimExtensions: Int? = nil, qmiRawIP: Bool? = nil, qmiDataAggregation: Bool? = nil,
        qmiDMSUIMRefused: Bool? = nil
    ) {
        self.mbimExtensions = mbimExtensions
        self.qmiRawIP = qmiRawIP
        self.qmiDataAggregation = qmiDataAggregation
        self.qmiDMSUIMRefused = qmiDMSUIMRefused
    }
}
