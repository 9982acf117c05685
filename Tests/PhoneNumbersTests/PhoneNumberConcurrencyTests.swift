import CellpathCore
import Testing

@testable import PhoneNumbers

@Suite("Phone numbers across threads")
struct PhoneNumberConcurrencyTests {
    @Test("parses concurrently from many tasks with the same results")
    func concurrent() async throws {
        let expected = validCases.map(\.e164)
        try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0 ..< 8 {
                group.addTask {
                    var results: [String] = []
                    for _ in 0 ..< 20 {
                        results = try validCases.map { try PhoneNumber.parse($0.input, defaultRegion: $0.region).e164 }
                    }
                    return results
                }
            }
            for try await results in group {
                #expect(results == expected)
            }
        }
    }
}
