import CellpathCLI
import CellpathCore
import CommandLineKit

/// The path of repeated runs: the bearer comes up (or is reused) for the first run and stays
/// for the next ones; `releaseAtEnd()` releases it once all have run.
actor FieldRunPath: CellularPathProvider {
    private let provider: any CellularPathProvider
    private var path: CellularPath?

    init(_ provider: any CellularPathProvider) {
        self.provider = provider
    }

    func cellularPath() async throws(CellpathError) -> CellularPath {
        if let path { return path }
        let path = try await provider.cellularPath()
        self.path = path
        return path
    }

    /// A run is over: the path stays for the next one.
    func release() async {}

    func releaseAtEnd() async {
        path = nil
        await provider.release()
    }
}
