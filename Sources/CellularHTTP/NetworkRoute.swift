import CellpathCore

/// The network a request goes through.
public enum NetworkRoute: Sendable, Equatable {
    /// The cellular path only: every socket bound to its interface and bearer address, every
    /// name resolved by its DNS servers through it. Fails closed, never falls back.
    case bound(CellularPath)
    /// The system's default network and resolver, as any program uses them (the backend leg).
    case defaultNetwork
}
