import CellpathCore
import Testing

@testable import PhoneNumbers

@Suite("Phone number performance and threads")
struct PhoneNumberPerformanceTests {
    @Test("parsing is fast once the metadata is loaded")
    func fast() throws {
        let clock = ContinuousClock()
        _ = try PhoneNumber.parse("+44 7940 448591", defaultRegion: nil)  // loads the metadata (~5 ms)
        let inputs = validCases.map { ($0.input, $0.region) }
        let rounds = 40
        let elapsed = try clock.measure {
            for _ in 0..<rounds {
                for (input, region) in inputs { _ = try PhoneNumber.parse(input, defaultRegion: region) }
            }
        }
        let perParse = elapsed / (rounds * inputs.count)
        print("phone numbers: \(perParse) per parse")
        // Typically tens of microseconds; the bound leaves room for a loaded CI machine.
        #expect(perParse < .milliseconds(2))
    }

    @Test("parses concurrently from many tasks with the same results")
    func concurrent() async throws {
        let expected = validCases.map(\.e164)
        try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var results: [String] = []
                    for _ in 0..<20 {
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
