import CellpathCore
import PhoneNumbers
import Synchronization

/// Phone numbers as written by clients, parsed and normalised to E.164 once: libphonenumber's
/// parse and validation (ICU regular expressions) was the largest single cost of creating a
/// check, and clients send the same numbers again and again. Holds at most `capacity` inputs,
/// in memory only; when full it starts afresh. Safe to use from any thread.
final class PhoneNumberCache: Sendable {
    let capacity: Int
    private let defaultRegion: String?
    private let parsed = Mutex<[String: Result<String, CellpathError>]>([:])

    init(defaultRegion: String?, capacity: Int = 4096) {
        self.defaultRegion = defaultRegion
        self.capacity = max(1, capacity)
    }

    /// The E.164 form of `input`, or the error that parsing it gave.
    func e164(_ input: String) throws(CellpathError) -> String {
        if let known = parsed.withLock({ $0[input] }) { return try known.get() }
        let result: Result<String, CellpathError>
        do throws(CellpathError) {
            result = .success(try PhoneNumber.parse(input, defaultRegion: defaultRegion).e164)
        } catch {
            result = .failure(error)
        }
        parsed.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[input] = result
        }
        return try result.get()
    }

    /// Inputs held now.
    var count: Int { parsed.withLock { $0.count } }
}
