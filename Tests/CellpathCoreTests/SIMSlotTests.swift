import CellpathCore
import Testing

/// What a SIM that is not there is called: by its slot, where the modem reports its slots.
@Suite struct SIMSlotTests {
    static let dualSIM = [
        SIMSlot(number: 1, content: .sim, active: false), SIMSlot(number: 2, content: .empty, active: true)
    ]

    @Test func anEmptyActiveSlotIsNamed() {
        let sim = SIMStatus(state: .absent, slots: Self.dualSIM)
        #expect(sim.missingSIMDescription == "no SIM in slot 2")
        #expect(sim.missingSIMRemedy == "insert a SIM in that slot, or use slot 1 with --sim-slot 1")
    }

    @Test func anESIMWithoutProfileIsNamed() {
        var slots = Self.dualSIM
        slots[1].content = .esimWithoutProfile
        let sim = SIMStatus(state: .esimWithoutProfile, slots: slots)
        #expect(sim.missingSIMDescription == "the eSIM in slot 2 has no enabled profile")
        #expect(sim.missingSIMRemedy == "enable one with your eSIM tool, e.g. lpac, or use slot 1 with --sim-slot 1")
    }

    @Test func withoutSlotsTheSIMIsMissingPlainly() {
        #expect(SIMStatus(state: .absent).missingSIMDescription == "no SIM")
        #expect(SIMStatus(state: .absent).missingSIMRemedy == "insert a SIM (and restart the modem if it needs it)")
        #expect(SIMStatus(state: .ready, slots: Self.dualSIM).missingSIMDescription == nil)
    }
}
