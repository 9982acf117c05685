import CellpathCore
import SystemSupport

/// The serving network a path provider tells beside a check (`servingNetworkNow`), asked at
/// once and waited for by the chain's thread just before the first request is written, so
/// that `x-tru-ops` names the network at check time and the chain loses no time when the
/// answer came before (the modem answers while DNS, TCP and TLS take their round trips).
final class ServingNetworkAnswer: Sendable {
    /// nil while the provider has not answered; then its answer.
    private let answer = WaitableValue<String??>(nil)

    init(asking pathProvider: any CellularPathProvider) {
        let answer = answer
        Task {
            let network = await pathProvider.servingNetworkNow()
            answer.update { $0 = .some(network) }
        }
    }

    /// What gives the answer, waiting at most `bound` for it (blocking: the chain's thread
    /// only); nil when the provider has nothing newer than the path's, or had not answered in time.
    func waiting(atMost bound: Duration) -> @Sendable () -> String? {
        let answer = answer
        return { answer.wait(until: { $0 != nil }, timeout: bound) ?? nil }
    }
}
