import SimulatorScenario

/// How the protocols name a simulated cell's technology.
extension SimulatedCell.Technology {
    /// MBIM data class: LTE or UMTS.
    var mbimDataClass: UInt32 {
        switch self {
        case .lte: 0x20
        case .umts: 0x04
        }
    }

    /// QMI NAS radio interface: LTE (8) or UMTS (5).
    var qmiRadioInterface: UInt8 {
        switch self {
        case .lte: 8
        case .umts: 5
        }
    }

    /// QMI NAS data capability: LTE (11) or WCDMA (5).
    var qmiDataCapability: UInt8 {
        switch self {
        case .lte: 11
        case .umts: 5
        }
    }
}

extension SimulatedCell {
    /// QMI NAS active band of the cell's band: E-UTRAN bands 1…14 are 120…133 (libqmi's
    /// QmiNasActiveBand), UMTS band 1 is WCDMA 2100 (80); nil for others and without a band.
    var qmiActiveBand: UInt16? {
        guard let band else { return nil }
        switch rat {
        case .lte: return (1 ... 14).contains(band) ? UInt16(119 + band) : band == 20 ? 145 : nil
        case .umts: return band == 1 ? 80 : nil
        }
    }
}
