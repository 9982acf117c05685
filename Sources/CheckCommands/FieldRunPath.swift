import CellpathCLI
import CellpathCore
import CommandLineKit
import SystemSupport

/// The path of repeated runs: the bearer comes up (or is reused) for the first run and stays
/// for the next ones; `releaseAtEnd()` releases it once all have run. A path that went away
/// between runs (the modem reset or re-enumerated, the network dropped the bearer), or under a
/// run that failed for it, is released and brought up again for the next run, on the modem as
/// it is now.
actor FieldRunPath: CellularPathProvider {
    private let provider: any CellularPathProvider
    private var path: CellularPath?

    init(_ provider: any CellularPathProvider) {
        self.provider = provider
    }

    func cellularPath() async throws(CellpathError) -> CellularPath {
        if let path {
            if Self.isWhole(path) { return path }
            self.path = nil
            await provider.release()
        }
        let path = try await provider.cellularPath()
        self.path = path
        return path
    }

    /// Whether `path`'s interface still exists, is up and holds its addresses.
    private static func isWhole(_ path: CellularPath) -> Bool {
        let state = InterfaceSnapshot.read(path.interfaceName)
        return state.exists && state.isUp
            && [path.ipv4Address, path.ipv6Address].compactMap { $0 }.allSatisfy { state.addresses.contains($0) }
    }

    func radioContext() async -> RadioContext? { await provider.radioContext() }

    func gnssFix(within bound: Duration) async -> GNSSReading { await provider.gnssFix(within: bound) }
    func confirmPath() async throws(CellpathError) { try await provider.confirmPath() }

    /// A run is over: the path stays for the next one.
    func release() async {}

    /// A run ended with `failure`: a path that may have gone bad under it (the modem or the
    /// network unavailable, a timeout: the modem suspended, ModemManager re-probed it) is
    /// released, and the next run brings it up again.
    func runEnded(with failure: CellpathError?) async {
        guard let failure, [.unavailable, .temporary].contains(failure.kind), path != nil else { return }
        path = nil
        await provider.release()
    }

    func releaseAtEnd() async {
        path = nil
        await provider.release()
    }
}

/// The number checked on a SIM: the one known before the runs, else the one the SIM holds, read
/// once (`read`) on its first run, when its slot is active and its bearer up (`--sim-slot all`).
actor SIMNumber {
    private var number: String?
    private let read: @Sendable () async throws -> String

    init(_ number: String?, read: @escaping @Sendable () async throws -> String) {
        self.number = number
        self.read = read
    }

    func value() async throws -> String {
        if let number { return number }
        let read = try await read()
        number = read
        return read
    }
}
