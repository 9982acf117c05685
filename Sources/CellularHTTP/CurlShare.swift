import CCurl
import Glibc

/// A libcurl share handle holding the TLS session cache of one client, so chains resume
/// sessions instead of full handshakes. Locked per data kind; usable from any thread.
///
/// `@unchecked Sendable` because the compiler cannot see through the two raw pointers; it is
/// safe: both are set once in `init` and never reassigned; libcurl reaches the shared data only
/// between its lock and unlock callbacks, which take the mutex of that data kind; and the share
/// is cleaned up in `deinit` only, when no transfer holds it any more (each `CurlTransfer`
/// keeps it until its easy handle has been cleaned up).
final class CurlShare: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer?
    private let locks: UnsafeMutablePointer<pthread_mutex_t>
    private static let lockCount = 16

    /// libcurl loaded and initialised, once per process (`CellularHTTPClient.prepareInBackground`
    /// may have begun it).
    static let ready: Bool = cp_curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    init() {
        _ = Self.ready
        locks = .allocate(capacity: Self.lockCount)
        for i in 0 ..< Self.lockCount { pthread_mutex_init(locks + i, nil) }
        handle = cp_curl_share_init()
        guard let handle else { return }
        cp_curl_share_setopt_pointer(handle, CURLSHOPT_USERDATA, UnsafeMutableRawPointer(locks))
        cp_curl_share_setopt_lock(handle) { _, data, _, user in
            let locks = user!.assumingMemoryBound(to: pthread_mutex_t.self)
            pthread_mutex_lock(locks + Int(data.rawValue) % CurlShare.lockCount)
        }
        cp_curl_share_setopt_unlock(handle) { _, data, user in
            let locks = user!.assumingMemoryBound(to: pthread_mutex_t.self)
            pthread_mutex_unlock(locks + Int(data.rawValue) % CurlShare.lockCount)
        }
        cp_curl_share_setopt_long(handle, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
    }

    deinit {
        if let handle { cp_curl_share_cleanup(handle) }
        for i in 0 ..< Self.lockCount { pthread_mutex_destroy(locks + i) }
        locks.deallocate()
    }
}
