import CellpathCore
import SimulatorScenario

/// The scenario that `json` decodes to.
func decode(_ json: String) throws -> Scenario { try Scenario.decode(Array(json.utf8)) }

/// The message with which the scenario's validation refuses `json`, or nil when it accepts it.
func validationMessage(_ json: String) -> String? {
    do {
        _ = try decode(json)
        return nil
    } catch let error as CellpathError {
        return error.message
    } catch {
        return "\(error)"
    }
}
