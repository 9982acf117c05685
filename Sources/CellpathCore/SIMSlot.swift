/// One SIM slot of a modem, numbered from 1 as ModemManager and the modem's label count
/// (mbimcli and qmicli count MBIM slots from 0).
public struct SIMSlot: Sendable, Equatable, Encodable {
    /// What a slot holds.
    public enum Content: String, Sendable, Equatable, CaseIterable, Encodable {
        /// A physical SIM card.
        case sim
        /// An eSIM (eUICC) with an enabled profile.
        case esim
        /// An eSIM with no enabled profile: it cannot register until one is enabled.
        case esimWithoutProfile = "esim-without-profile"
        /// No card.
        case empty
        /// A card the modem cannot use (powered off, not ready, in error).
        case unusable
    }

    public var number: Int
    public var content: Content
    /// Whether the modem uses this slot now.
    public var active: Bool

    public init(number: Int, content: Content, active: Bool) {
        self.number = number
        self.content = content
        self.active = active
    }

    /// Why no check can run on this slot's SIM (`--sim-slot all` skips the slot, saying so);
    /// nil when it holds one that can register.
    public var skipReason: String? {
        switch content {
        case .sim, .esim: nil
        case .empty: "no SIM in slot \(number)"
        case .esimWithoutProfile: "the eSIM in slot \(number) has no enabled profile"
        case .unusable: "the card in slot \(number) is unusable (powered off, not ready or in error)"
        }
    }

    /// The keys `modems --json` and a device capture write a slot with.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case number = "slot", content, active
    }
}

extension SIMStatus {
    /// The active slot, where the modem reports its slots.
    public var activeSlot: SIMSlot? { slots.first { $0.active } }

    /// Why the SIM cannot be used, in words that name the slot: `no SIM in slot 2`, `the eSIM in
    /// slot 2 has no enabled profile`; nil when it can be, or for other states.
    public var missingSIMDescription: String? {
        let slot = activeSlot.map { " in slot \($0.number)" } ?? ""
        switch state {
        case .absent: return "no SIM\(slot)"
        case .esimWithoutProfile: return "the eSIM\(slot) has no enabled profile"
        default: return nil
        }
    }

    /// What to do about `missingSIMDescription`.
    public var missingSIMRemedy: String? {
        let other = slots.count > 1 ? activeSlot.flatMap { active in slots.first { $0.number != active.number } } : nil
        let orOther = other.map { ", or use slot \($0.number) with --sim-slot \($0.number)" } ?? ""
        switch state {
        case .absent:
            return activeSlot == nil
                ? "insert a SIM (and restart the modem if it needs it)" : "insert a SIM in that slot\(orOther)"
        case .esimWithoutProfile: return "enable one with your eSIM tool, e.g. lpac\(orOther)"
        default: return nil
        }
    }
}
