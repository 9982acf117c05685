import CCurl
import Synchronization
import SystemSupport

/// Drives every default-network exchange of one `HTTPClient` on a single libcurl multi handle,
/// from one thread that runs while there is work (and briefly after): no request needs a thread of its own, and the
/// multi handle's connection cache keeps up to `maxConnections` connections open for later
/// requests (curl reuses one idle for less than `idleLimit`).
///
/// `@unchecked Sendable` because of the multi handle's raw pointer; it is safe: the handle is
/// used by the loop's thread only (one at a time: a new thread starts only after the previous
/// one gave up its work under the inbox lock), except for `curl_multi_wakeup`, which libcurl
/// allows from any thread, and the clean-up in `deinit`, when no thread holds the loop any more.
final class CurlEventLoop: @unchecked Sendable {
    /// A prepared easy handle on its way to the loop, and who waits for its result.
    private struct Submission: @unchecked Sendable {
        let easy: UnsafeMutableRawPointer
        let cancellation: TransferCancellation
        let done: CheckedContinuation<CURLcode, Never>
    }

    private struct Inbox {
        var submitted: [Submission] = []
        /// True while a thread drives the loop.
        var driving = false
    }

    let maxConnections: Int
    let idleLimit: Duration
    private let multi: UnsafeMutableRawPointer?
    /// Kept until the multi handle is cleaned up: its cached connections may still use the TLS sessions.
    private let share: CurlShare
    private let inbox = Mutex(Inbox())

    init(share: CurlShare, maxConnections: Int, idleLimit: Duration) {
        self.share = share
        self.maxConnections = max(1, maxConnections)
        self.idleLimit = idleLimit
        multi = cp_curl_multi_init()
        if let multi { _ = cp_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, self.maxConnections) }
    }

    deinit {
        // Closes the cached connections.
        if let multi { cp_curl_multi_cleanup(multi) }
    }

    /// Runs the transfer prepared on `easy` and returns curl's result. The easy handle belongs to
    /// the loop until this returns; once `cancellation` fires (and `wake()` is called) the
    /// transfer ends with CURLE_ABORTED_BY_CALLBACK.
    func run(_ easy: UnsafeMutableRawPointer, cancellation: TransferCancellation) async -> CURLcode {
        guard let multi else { return CURLE_FAILED_INIT }
        return await withCheckedContinuation { continuation in
            let submission = Submission(easy: easy, cancellation: cancellation, done: continuation)
            let start = inbox.withLock { box -> Bool in
                box.submitted.append(submission)
                defer { box.driving = true }
                return !box.driving
            }
            guard start else {
                cp_curl_multi_wakeup(multi)
                return
            }
            do throws(SystemError) {
                try Threads.detach { [self] in drive() }
            } catch {
                drive()  // no thread to be had: drive here rather than never
            }
        }
    }

    /// Wakes the loop so that it notices a cancellation at once.
    func wake() {
        if let multi { cp_curl_multi_wakeup(multi) }
    }

    /// How long the loop's thread waits for new work once nothing runs, before it ends: requests
    /// that follow each other closely then find it running instead of starting a thread each.
    static let lingerMilliseconds: Int32 = 200

    /// The loop: takes new transfers, drops cancelled ones, runs curl and hands back the finished
    /// ones, until nothing has been submitted or running for `lingerMilliseconds`.
    private func drive() {
        guard let multi else { return }
        var active: [UnsafeMutableRawPointer: Submission] = [:]
        var idleSince: ContinuousClock.Instant?
        while true {
            let submitted = inbox.withLock { box -> [Submission]? in
                if box.submitted.isEmpty && active.isEmpty, let idleSince,
                    idleSince.duration(to: .now) >= .milliseconds(Self.lingerMilliseconds)
                {
                    box.driving = false
                    return nil
                }
                defer { box.submitted = [] }
                return box.submitted
            }
            guard let submitted else { return }
            if submitted.isEmpty && active.isEmpty {
                if idleSince == nil { idleSince = .now }
                _ = cp_curl_multi_poll(multi, nil, 0, Self.lingerMilliseconds, nil)
                continue
            }
            idleSince = nil
            for submission in submitted {
                if cp_curl_multi_add_handle(multi, submission.easy) == CURLM_OK {
                    active[submission.easy] = submission
                } else {
                    submission.done.resume(returning: CURLE_FAILED_INIT)
                }
            }
            for (easy, submission) in active where submission.cancellation.isCancelled {
                cp_curl_multi_remove_handle(multi, easy)
                active[easy] = nil
                submission.done.resume(returning: CURLE_ABORTED_BY_CALLBACK)
            }
            var running: Int32 = 0
            if cp_curl_multi_perform(multi, &running) != CURLM_OK {
                for (easy, submission) in active {
                    cp_curl_multi_remove_handle(multi, easy)
                    submission.done.resume(returning: CURLE_FAILED_INIT)
                }
                active = [:]
            }
            var left: Int32 = 0
            while let message = cp_curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let submission = active.removeValue(forKey: easy)
                else { continue }
                let result = message.pointee.data.result
                cp_curl_multi_remove_handle(multi, easy)
                submission.done.resume(returning: result)
            }
            if !active.isEmpty { _ = cp_curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
    }
}
