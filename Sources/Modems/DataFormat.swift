/// What a QMI modem's firmware puts on its data endpoint (WDA data format): its link-layer
/// protocol, and whether it multiplexes sessions with QMAP.
public struct DataFormat: Sendable, Equatable {
    /// The link-layer protocol, as libqmi names it.
    public enum LinkLayer: String, Sendable, Equatable {
        case ethernet = "802-3"
        case rawIP = "raw-ip"
    }

    public var linkLayer: LinkLayer
    /// QMAP on the downlink: each session's packets carry its mux id, and flow on the kernel's
    /// mux device of that id (qmi_wwan's `qmimuxN`), never on the master interface.
    public var qmap: Bool

    public init(linkLayer: LinkLayer, qmap: Bool = false) {
        self.linkLayer = linkLayer
        self.qmap = qmap
    }
}

/// The QMAP mux that a session's WDS clients bind to (WDS Bind Mux Data Port) before they
/// start it: its mux id on the modem's data endpoint.
public struct MuxDataPort: Sendable, Equatable {
    /// The modem's data endpoint, as WDA and WDS name its type.
    public enum Endpoint: String, Sendable, Equatable {
        case hsusb, pcie
    }

    public var muxID: UInt8
    public var endpoint: Endpoint
    /// The USB interface number of the data interface (`bInterfaceNumber`), 0 on PCIe.
    public var interfaceNumber: UInt32

    public init(muxID: UInt8, endpoint: Endpoint, interfaceNumber: UInt32) {
        self.muxID = muxID
        self.endpoint = endpoint
        self.interfaceNumber = interfaceNumber
    }
}
