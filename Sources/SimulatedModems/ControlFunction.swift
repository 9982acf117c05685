import CellpathCore
import SimulatorScenario

/// A modem's control protocol (MBIM or QMI) as a byte-stream state machine. Confined to the
/// modem's server thread; never traps on any input.
protocol ControlFunction: AnyObject {
    /// Consumes bytes read from the control port; returns the frames to write back, in order.
    func receive(_ bytes: [UInt8], now: Double) -> [[UInt8]]
    /// True while an incomplete frame waits for more bytes.
    var hasPartialInput: Bool { get }
    /// Forgets an incomplete frame (its sender went away).
    func discardPartialInput()
    /// The network dropped the bearer with this 3GPP cause (only the call of `family` where the
    /// protocol has one per family, QMI; the whole bearer when nil): the indications to send.
    func bearerDropped(cause: Int, family: BearerIPType?) -> [[UInt8]]
    /// Registration (or radio) changed outside a request: the indications to send.
    func registrationChanged() -> [[UInt8]]
    /// The SIM was pulled out (`sim` nil) or `sim` inserted (a hot-swap): takes the bearer down,
    /// changes the state's SIM and returns the indications a real function sends.
    func simChanged(to sim: SimulatedSIM?) -> [[UInt8]]
    /// The control port goes away (unplug, stop): take down what the function owns.
    func shutdown()
    /// True for a frame of the garbage-frames fault.
    func isJunk(_ frame: [UInt8]) -> Bool
}

/// Deterministic junk for the garbage-frames fault: a sequence seeded by the frame number.
func garbageBytes(count: Int, seed: Int) -> [UInt8] {
    var x = UInt32(truncatingIfNeeded: seed &* 2654435761 &+ 12345)
    return (0 ..< count).map { _ in
        x ^= x << 13; x ^= x >> 17; x ^= x << 5
        return UInt8(truncatingIfNeeded: x)
    }
}
