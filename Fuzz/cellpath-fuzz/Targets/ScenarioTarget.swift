import CellpathCore
import SimulatorScenario

@testable import SimulatedModems

/// Scenario files (`Scenario.decode`: strict JSON, then every field read and checked).
///
/// Invariants: a scenario that decodes validates, and its encoding decodes to the same
/// scenario; each of its modems starts (its simulated MBIM or QMI function answers an OPEN or a
/// CTL request); a refusal is a `.dataError` whose message starts with the source name.
enum ScenarioTarget: FuzzTarget {
    static let name = "scenario"

    static func run(_ input: [UInt8]) {
        let scenario: Scenario
        do {
            scenario = try Scenario.decode(input, source: "fuzz.json")
        } catch let error as CellpathError {
            require(
                error.kind == .dataError && error.message.hasPrefix("fuzz.json"),
                "refused as \(error.kind): \(shown(error.message))")
            return
        } catch {
            require(false, "decode threw \(error)")
            return
        }
        do {
            try scenario.validate()
        } catch {
            require(false, "a decoded scenario does not validate: \(error)")
        }
        let again = try? Scenario.decode(scenario.encoded(), source: "encoded")
        require(
            again == scenario,
            "decode(encoded()) is not the same scenario: \(shown(String(decoding: scenario.encoded(), as: UTF8.self)))")
        for (index, modem) in scenario.modems.enumerated() {
            let state = ModemState(index: index, modem: modem, bearerNetwork: StaticBearerNetwork())
            switch modem.protocol {
            case .mbim:
                let open: [UInt8] = [1, 0, 0, 0, 16, 0, 0, 0, 9, 0, 0, 0, 0, 16, 0, 0]
                let answer = MBIMFunction(state: state).receive(open, now: 0).first
                require(
                    answer.map { readLE32($0, 0) == 0x8000_0001 && readLE32($0, 8) == 9 } == true,
                    "modem \(index) does not answer OPEN")
            case .qmi:
                let versionInfo: [UInt8] = [1, 11, 0, 0, 0, 0, 0, 5, 0x21, 0, 0, 0]
                let answer = QMIFunction(state: state).receive(versionInfo, now: 0).first
                require(
                    answer.map { $0.count > 12 && $0[7] == 5 && $0[8] == 0x21 } == true,
                    "modem \(index) does not answer CTL")
            }
        }
    }
}
