import SimulatorScenario

/// MS Basic Connect Extensions, as the device profile has them: MBIM Version (MBIMEx
/// negotiation), Device Caps in the MBIMEx v2 and v3 layouts, and for dual-SIM modems Sys Caps,
/// Device Slot Mappings and Slot Info Status (libmbim's mbim-service-ms-basic-connect-extensions
/// json files give the layouts).
extension MBIMFunction {
    /// The CIDs of the service this modem lists in DEVICE_SERVICES (none: the service is absent).
    var extensionsServiceCIDs: [MBIMExtensionsCID] {
        var cids: [MBIMExtensionsCID] = []
        if state.modem.profile.mbimExtensions != .none { cids += [.deviceCaps, .version, .baseStationsInfo] }
        if state.slotCount > 1 { cids += [.sysCaps, .deviceSlotMappings, .slotInfoStatus] }
        return cids
    }

    /// A command of the service: `NoDeviceSupport` for a CID the modem does not list.
    func basicConnectExtensions(cid: UInt32, set: Bool, info: [UInt8]) -> (MBIMStatus, [UInt8]) {
        guard let command = MBIMExtensionsCID(rawValue: cid), extensionsServiceCIDs.contains(command) else {
            return (.noDeviceSupport, [])
        }
        switch (command, set) {
        case (.version, false): return negotiateVersion(info)
        case (.deviceCaps, false): return (.success, extensionsDeviceCapsInfo())
        case (.sysCaps, false): return (.success, sysCapsInfo())
        case (.deviceSlotMappings, false): return (.success, slotMappingsInfo())
        case (.deviceSlotMappings, true): return setSlotMappings(info)
        case (.slotInfoStatus, false): return slotInfoStatus(info)
        case (.baseStationsInfo, false): return (.success, baseStationsInfo())
        default: return (.noDeviceSupport, [])
        }
    }

    /// MBIM Version: the host sends its MBIM and MBIMEx versions (BCD, 0x0100 and 0x0200 /
    /// 0x0300); the device answers MBIM 1.0 and the MBIMEx version both will speak, the lower of
    /// the host's and its own, and answers in that version's layouts from then on.
    private func negotiateVersion(_ info: [UInt8]) -> (MBIMStatus, [UInt8]) {
        let reader = ByteReader(info)
        guard let hostExtended = reader.u16(at: 2) else { return (.invalidParameters, []) }
        let own = state.modem.profile.mbimExtensions
        let host: DeviceProfile.MBIMExtensions = hostExtended >= 0x0300 ? .v3 : hostExtended >= 0x0200 ? .v2 : .none
        extensions = min(own, host)
        var w = ByteWriter()
        w.u16(0x0100)
        w.u16(extensions == .none ? 0x0100 : UInt16(extensions.rawValue) << 8)
        return (.success, w.bytes)
    }

    /// Device Caps of MS Basic Connect Extensions: ModemManager reads it instead of Basic
    /// Connect's once MBIMEx v2 is negotiated (v3: the TLV layout with band classes).
    private func extensionsDeviceCapsInfo() -> [UInt8] {
        let m = state.modem
        var b = MBIMInfoBuilder()
        b.u32(1)  // device type: embedded
        b.u32(1)  // cellular class: GSM
        b.u32(1)  // voice class: no voice
        b.u32(state.slotCount > 1 ? 3 : 2)  // SIM class: removable (and embedded with an eSIM slot)
        b.u32(0x3f)  // data class: GPRS | EDGE | UMTS | HSDPA | HSUPA | LTE
        b.u32(0x3)  // SMS caps: PDU receive | PDU send
        b.u32(0x1)  // control caps: manual registration
        if extensions >= .v3 {
            b.u64(0)  // data subclass: none
            b.u32(1)  // max sessions
            b.u32(0)  // executor index
            b.u32(0)  // WCDMA band class: none
            b.tlv(type: 11, [3, 0, 7, 0, 20, 0])  // LTE bands 3, 7, 20 (MBIM_TLV_TYPE_UINT16_TBL)
            b.tlv(type: 11, [])  // NR bands: none
            b.tlvString("")
            b.tlvString(m.imei)
            b.tlvString(m.firmware)
            b.tlvString(m.model)
        } else {
            b.u32(1)  // max sessions
            b.string("")
            b.string(m.imei)
            b.string(m.firmware)
            b.string(m.model)
            b.u32(0)  // executor index
        }
        return b.build()
    }

    /// Base Stations Info in the negotiated layout: the system type (MBIMEx v3: and subtype,
    /// none), the serving LTE cell (while registered on one), no other serving cell and empty
    /// neighbour lists (MBIMEx v3: and empty NR serving and neighbour lists).
    private func baseStationsInfo() -> [UInt8] {
        let cell = state.servingCell
        let network = state.network
        var b = MBIMInfoBuilder()
        b.u32(state.isRegistered ? cell.rat.mbimDataClass : 0)
        if extensions >= .v3 { b.u32(0) }  // system subtype: none
        b.structure([])  // GSM serving cell
        b.structure([])  // UMTS serving cell
        b.structure([])  // TD-SCDMA serving cell
        if state.isRegistered, cell.rat == .lte {
            var lte = MBIMInfoBuilder()
            lte.string(network.mcc + network.mnc)
            lte.u32(UInt32(cell.cellId))
            lte.u32(UInt32(cell.channel))
            lte.u32(UInt32(cell.pci))
            lte.u32(UInt32(cell.tac))
            lte.u32(UInt32(bitPattern: Int32(cell.rsrpDbm)))
            lte.u32(UInt32(bitPattern: Int32(cell.rsrqDb)))
            lte.u32(0xffff_ffff)  // timing advance unknown
            b.structure(lte.build())
        } else {
            b.structure([])
        }
        // GSM, UMTS, TD-SCDMA, LTE neighbours, CDMA cells (MBIMEx v3: NR serving and neighbour cells): none
        for _ in 0 ..< (extensions >= .v3 ? 7 : 5) { b.structure([0, 0, 0, 0]) }
        return b.build()
    }

    /// Sys Caps: one executor (modem) and its slots.
    private func sysCapsInfo() -> [UInt8] {
        var b = MBIMInfoBuilder()
        b.u32(1)  // executors
        b.u32(UInt32(state.slotCount))  // slots
        b.u32(1)  // concurrency: one slot at a time
        b.u64(0)  // modem id
        return b.build()
    }

    /// Device Slot Mappings: the executor's slot, 0-based.
    private func slotMappingsInfo() -> [UInt8] {
        var slot = ByteWriter()
        slot.u32(UInt32(state.activeSlot - 1))
        var b = MBIMInfoBuilder()
        b.u32(1)
        b.structure(slot.bytes)
        return b.build()
    }

    /// Switches the executor to the slot asked for, as ModemManager's SetPrimarySimSlot does: the
    /// bearer goes down and the subscriber goes through NOT_INITIALIZED to the new card's state.
    private func setSlotMappings(_ info: [UInt8]) -> (MBIMStatus, [UInt8]) {
        let reader = ByteReader(info)
        guard reader.u32(at: 0) == 1, let offset = reader.u32(at: 4), let slot = reader.u32(at: Int(offset)),
            slot < UInt32(state.slotCount)
        else { return (.invalidParameters, []) }
        let hadBearer = state.bearer != nil, target = Int(slot) + 1
        if target != state.activeSlot, state.switchSlot(to: target) {
            if hadBearer { pendingIndications += bearerDropped(cause: 0, family: nil) }
            for initializing in [true, false] {
                pendingIndications += indication(
                    service: MBIMUUID.basicConnect,
                    cid: MBIMBasicConnectCID.subscriberReadyStatus.rawValue,
                    subscriberReadyInfo(initializing: initializing))
            }
            pendingIndications += indication(
                service: MBIMUUID.msBasicConnectExtensions,
                cid: MBIMExtensionsCID.slotInfoStatus.rawValue, slotInfo(index: slot))
        }
        return (.success, slotMappingsInfo())
    }

    private func slotInfoStatus(_ info: [UInt8]) -> (MBIMStatus, [UInt8]) {
        guard let index = ByteReader(info).u32(at: 0), index < UInt32(state.slotCount) else {
            return (.invalidParameters, [])
        }
        return (.success, slotInfo(index: index))
    }

    /// Slot Info Status of the 0-based slot `index`: a card (active), an eSIM with or without an
    /// enabled profile, or empty.
    private func slotInfo(index: UInt32) -> [UInt8] {
        let slot = Int(index) + 1
        let esim = slot == 2 && state.modem.secondSlot?.esim == true
        let card = state.card(inSlot: slot) != nil
        let slotState: MBIMSlotState = esim ? (card ? .activeESIM : .activeESIMNoProfiles) : (card ? .active : .empty)
        var w = ByteWriter()
        w.u32(index)
        w.u32(slotState.rawValue)
        return w.bytes
    }
}
