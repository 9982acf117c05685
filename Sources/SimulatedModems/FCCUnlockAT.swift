import CellpathCrypto
import Synchronization

/// The FCC lock of a Fibocom FM350 (t7xx) as its AT port sees it: the challenge the modem gave
/// and what unlocking does (the modem's `unlockFCC`). Thread-safe: the AT port's thread asks.
public final class FCCUnlockATState: Sendable {
    private let challenge = Mutex<UInt32?>(nil)
    private let unlock: @Sendable () -> Void

    /// `unlock` lifts the modem's lock (`SimulatedModemDevice.unlockFCC`).
    public init(unlock: @escaping @Sendable () -> Void) { self.unlock = unlock }

    fileprivate func newChallenge() -> UInt32 {
        let value = UInt32.random(in: 1 ... UInt32.max)
        challenge.withLock { $0 = value }
        return value
    }

    fileprivate var lastChallenge: UInt32? { challenge.withLock { $0 } }
    fileprivate func unlockModem() { unlock() }
}

/// The FM350's vendor id hash that ModemManager's fcc-unlock.d script for 14c3 combines with the
/// challenge (a public constant of that script).
private let fm350VendorHash: [UInt8] = [0x3d, 0xf8, 0xc7, 0x19]

/// The answer of a Fibocom FM350 AT port to the FCC unlock commands, as the information line the
/// responder sends before `OK`, or nil for any other command (the port's own table answers it):
/// - `AT+GTFCCLOCKGEN`: `+GTFCCLOCKGEN: 0x<challenge>` (a fresh 32-bit challenge);
/// - `AT+GTFCCLOCKVER=<n>`: `+GTFCCLOCKVER: 1` and the lock lifted when `n` is the first 32 bits
///   (as a decimal number) of SHA-256(challenge, big-endian ‖ vendor hash 3df8c719), else
///   `+GTFCCLOCKVER: 0`. ModemManager's script computes exactly this.
public func fccUnlockATResponse(command: String, state: FCCUnlockATState) -> String? {
    let line = command.uppercased().filter { !$0.isWhitespace }
    if line == "AT+GTFCCLOCKGEN" {
        return "+GTFCCLOCKGEN: 0x" + hex(state.newChallenge())
    }
    guard line.hasPrefix("AT+GTFCCLOCKVER=") else { return nil }
    let answer = UInt32(line.dropFirst("AT+GTFCCLOCKVER=".count))
    guard let challenge = state.lastChallenge, let answer, answer == fm350ExpectedResponse(challenge: challenge) else {
        return "+GTFCCLOCKVER: 0"
    }
    state.unlockModem()
    return "+GTFCCLOCKVER: 1"
}

/// The response the FM350 expects to `challenge`.
func fm350ExpectedResponse(challenge: UInt32) -> UInt32 {
    let input = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: challenge >> UInt32($0)) } + fm350VendorHash
    return Digest.sha256(input).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
}

private func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
}

extension ATCommandTable {
    /// Answers the Fibocom FM350's FCC unlock commands (`AT+GTFCCLOCKGEN`, `AT+GTFCCLOCKVER=`)
    /// with `fccUnlockATResponse`.
    mutating func registerFCCUnlock(_ state: FCCUnlockATState) {
        for name in ["+GTFCCLOCKGEN", "+GTFCCLOCKVER"] {
            register(name) { arguments in
                fccUnlockATResponse(command: "AT\(name)\(arguments)", state: state).map { .ok([$0]) } ?? .error
            }
        }
    }
}

/// The unlock an AT port calls, pointed at its device once the device exists.
final class FCCUnlockRelay: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)

    func target(_ unlock: @escaping @Sendable () -> Void) { action.withLock { $0 = unlock } }

    var unlock: @Sendable () -> Void { { [self] in action.withLock { $0 }?() } }
}
