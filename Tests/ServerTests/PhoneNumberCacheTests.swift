import CellpathCore
import PhoneNumbers
import Testing

@testable import Server

/// Serve's phone-number cache gives what libphonenumber gives, errors included, within its bound.
struct PhoneNumberCacheTests {
    @Test func answersAsAFreshParseDoesAndAgainFromTheCache() throws {
        let cache = PhoneNumberCache(defaultRegion: "GB")
        for input in ["+44 7940 448591", "07940 448591", "+447940448591"] {
            let fresh = try PhoneNumber.parse(input, defaultRegion: "GB").e164
            #expect(try cache.e164(input) == fresh)
            #expect(try cache.e164(input) == fresh)  // now from the cache
        }
        #expect(cache.count == 3)
    }

    @Test func anInvalidNumberThrowsTheSameErrorEachTime() {
        let cache = PhoneNumberCache(defaultRegion: nil)
        var fresh: CellpathError?
        do { _ = try PhoneNumber.parse("+44 12", defaultRegion: nil) } catch { fresh = error }
        for _ in 0 ..< 2 {
            #expect(throws: fresh!) { try cache.e164("+44 12") }
        }
    }

    @Test func holdsAtMostItsCapacity() throws {
        let cache = PhoneNumberCache(defaultRegion: nil, capacity: 2)
        for last in 1 ... 5 { _ = try cache.e164("+44794044859\(last)") }
        #expect(cache.count <= 2)
        #expect(try cache.e164("+447940448591") == "+447940448591")
    }
}
