import SimulatorScenario

/// What a QMI modem's firmware puts on its data endpoint (WDA Get/Set Data Format): the link-layer
/// protocol, and QMAP aggregation with its limits on firmware that multiplexes.
struct QMIDataFormat: Equatable {
    /// QmiWdaLinkLayerProtocol.
    enum LinkLayer: UInt32 { case ethernet = 1, rawIP = 2 }

    /// QmiWdaDataAggregationProtocol values the simulated firmware takes: disabled, QMAP, QMAPv5.
    static let aggregationProtocols: Set<UInt32> = [0, 5, 9]
    /// The firmware's ceilings for QMAP aggregation, as RM500Q-class firmware reports them.
    static let downlinkMaxDatagramsLimit: UInt32 = 32
    static let downlinkMaxSizeLimit: UInt32 = 32768
    static let uplinkMaxDatagrams: UInt32 = 16
    static let uplinkMaxSize: UInt32 = 8192

    var linkLayer: LinkLayer
    var uplinkAggregation: UInt32 = 0
    var downlinkAggregation: UInt32 = 0
    var downlinkMaxDatagrams: UInt32 = 0
    var downlinkMaxSize: UInt32 = 0

    /// The format the firmware starts in: the profile's link-layer protocol, no aggregation.
    init(firmwareDefault profile: DeviceProfile) {
        linkLayer = profile.qmi.firmwareRawIP ? .rawIP : .ethernet
    }

    /// The firmware multiplexes sessions with QMAP.
    var isQMAP: Bool { downlinkAggregation != 0 }

    /// The response TLVs: QoS off, the link layer, both aggregation protocols, and the limits
    /// while QMAP is on.
    var tlvs: [QMITLV] {
        var tlvs = [
            QMITLV(0x10, u8: 0), QMITLV(0x11, u32: linkLayer.rawValue),
            QMITLV(0x12, u32: uplinkAggregation), QMITLV(0x13, u32: downlinkAggregation)
        ]
        if isQMAP {
            tlvs += [
                QMITLV(0x15, u32: downlinkMaxDatagrams), QMITLV(0x16, u32: downlinkMaxSize),
                QMITLV(0x17, u32: Self.uplinkMaxDatagrams), QMITLV(0x18, u32: Self.uplinkMaxSize)
            ]
        }
        return tlvs
    }

    /// Applies a Set Data Format request (what it leaves out stays); nil on success. Firmware
    /// without QMAP leaves aggregation disabled, and raw-ip-only firmware its link layer, and
    /// says so in its answer; QMAP needs raw-ip.
    mutating func apply(_ request: [UInt8: [UInt8]], qmapCapable: Bool, ethernetCapable: Bool = true) -> QMIError? {
        func u32(_ type: UInt8) -> UInt32? { request[type].flatMap { $0.count == 4 ? ByteReader($0).u32(at: 0) : nil } }
        var next = self
        var requested: LinkLayer?
        if let value = u32(0x11) {
            guard let linkLayer = LinkLayer(rawValue: value) else { return .invalidArgument }
            requested = linkLayer
            if linkLayer == .rawIP || ethernetCapable { next.linkLayer = linkLayer }
        }
        if qmapCapable {
            for (type, protocolValue) in [(UInt8(0x12), u32(0x12)), (0x13, u32(0x13))] {
                guard let protocolValue else { continue }
                guard Self.aggregationProtocols.contains(protocolValue) else { return .invalidArgument }
                if type == 0x12 {
                    next.uplinkAggregation = protocolValue
                } else {
                    next.downlinkAggregation = protocolValue
                }
            }
            if next.isQMAP && (requested ?? next.linkLayer) != .rawIP { return .invalidArgument }
            next.downlinkMaxDatagrams =
                next.isQMAP
                ? min(u32(0x15) ?? Self.downlinkMaxDatagramsLimit, Self.downlinkMaxDatagramsLimit) : 0
            next.downlinkMaxSize =
                next.isQMAP
                ? min(u32(0x16) ?? Self.downlinkMaxSizeLimit, Self.downlinkMaxSizeLimit) : 0
        }
        self = next
        return nil
    }
}
