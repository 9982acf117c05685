import CGIO
import CMBIM
import CellpathCore
import GLibRuntime

/// SIM slots over MS Basic Connect Extensions: Sys Caps (how many slots), Device Slot Mappings
/// (which slot the modem uses, 0-based on the wire) and Slot Info Status (what each holds).
extension MBIMModem {
    /// Statuses of a modem without the slot commands: it has one slot.
    private static let noSlotSupport = [
        MBIM_STATUS_ERROR_NO_DEVICE_SUPPORT, MBIM_STATUS_ERROR_OPERATION_NOT_ALLOWED,
        MBIM_STATUS_ERROR_INVALID_PARAMETERS
    ]

    func simSlots() async throws(ModemError) -> [SIMSlot] {
        let count = try await slotCount()
        guard count > 1 else { return [] }
        let active = try await activeSlotIndex()
        var slots: [SIMSlot] = []
        for index in 0 ..< UInt32(count) {
            let operation = "query the state of SIM slot \(index + 1)"
            let request = mbim_message_ms_basic_connect_extensions_slot_info_status_query_new(index, nil)
            guard let response = try await command(operation, request, states: Self.noSlotSupport) else { continue }
            var state = MBIM_UICC_SLOT_STATE_UNKNOWN
            try parse(operation) { error in
                mbim_message_ms_basic_connect_extensions_slot_info_status_response_parse(
                    response.message, nil, &state, &error)
            }
            slots.append(SIMSlot(number: Int(index) + 1, content: Self.content(state), active: index == active))
        }
        return slots
    }

    func switchSIMSlot(to number: Int) async throws(ModemError) {
        let operation = "switch to SIM slot \(number)"
        var slot = MbimSlot(slot: UInt32(number - 1))
        let request = withUnsafeMutablePointer(to: &slot) { pointer in
            var map: [UnsafePointer<MbimSlot>?] = [UnsafePointer(pointer)]
            return map.withUnsafeMutableBufferPointer { buffer in
                mbim_message_ms_basic_connect_extensions_device_slot_mappings_set_new(1, buffer.baseAddress, nil)
            }
        }
        _ = try await command(operation, request)
        let active = try await activeSlotIndex()
        guard active == UInt32(number - 1) else {
            throw ModemError(
                .protocol, .unavailable, operation: session.describe(operation),
                reason: "the modem still uses slot \(active.map { String($0 + 1) } ?? "unknown")")
        }
    }

    /// The number of slots Sys Caps reports; 1 when the modem does not support the command.
    private func slotCount() async throws(ModemError) -> Int {
        let operation = "query the system capabilities"
        let request = mbim_message_ms_basic_connect_extensions_sys_caps_query_new(nil)
        guard let response = try await command(operation, request, states: Self.noSlotSupport) else { return 1 }
        var slots: UInt32 = 0
        try parse(operation) { error in
            mbim_message_ms_basic_connect_extensions_sys_caps_response_parse(
                response.message, nil, &slots, nil, nil, &error)
        }
        return Int(slots)
    }

    /// The 0-based slot the modem's executor uses; nil when it does not say.
    private func activeSlotIndex() async throws(ModemError) -> UInt32? {
        let operation = "query the device slot mappings"
        let request = mbim_message_ms_basic_connect_extensions_device_slot_mappings_query_new(nil)
        guard let response = try await command(operation, request, states: Self.noSlotSupport) else { return nil }
        var count: UInt32 = 0
        var map: UnsafeMutablePointer<UnsafeMutablePointer<MbimSlot>?>?
        try parse(operation) { error in
            mbim_message_ms_basic_connect_extensions_device_slot_mappings_response_parse(
                response.message, &count, &map, &error)
        }
        defer { mbim_slot_array_free(map) }
        guard count > 0, let first = map?[0] else { return nil }
        return first.pointee.slot
    }

    nonisolated static func content(_ state: MbimUiccSlotState) -> SIMSlot.Content {
        switch state {
        case MBIM_UICC_SLOT_STATE_ACTIVE: .sim
        case MBIM_UICC_SLOT_STATE_ACTIVE_ESIM: .esim
        case MBIM_UICC_SLOT_STATE_ACTIVE_ESIM_NO_PROFILES: .esimWithoutProfile
        case MBIM_UICC_SLOT_STATE_EMPTY, MBIM_UICC_SLOT_SATE_OFF_EMPTY: .empty
        default: .unusable
        }
    }
}
