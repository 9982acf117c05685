import CellpathCore
import SimulatorScenario
import Testing

/// A modem's GNSS fix in the scenario (`modems[i].gnss`): read with its defaults, written back,
/// refused by field when it is no place on the globe.
@Suite struct GNSSScenarioTests {
    @Test func aFixIsReadWithItsDefaultsAndSurvivesTheDaemonsRoundTrip() throws {
        let scenario = try Scenario.decode(
            Array(
                """
                {"modems": [{"protocol": "qmi", "gnss": {"lat": 51.5072, "lon": -0.1276}},
                            {"protocol": "qmi", "gnss": {"lat": -33.9, "lon": 151.2, "accuracy": 25, "ageSeconds": 700}},
                            {"protocol": "qmi", "gnss": null}]}
                """.utf8))
        #expect(scenario.modems[0].gnss == SimulatedGNSS(lat: 51.5072, lon: -0.1276, accuracy: 10, ageSeconds: 0))
        #expect(scenario.modems[1].gnss == SimulatedGNSS(lat: -33.9, lon: 151.2, accuracy: 25, ageSeconds: 700))
        #expect(scenario.modems[2].gnss == nil)
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
        #expect(try Scenario.decode(Array("{}".utf8)).modems[0].gnss == nil)
    }

    @Test func aFixOffTheGlobeOrWithoutAPlaceIsRefusedByField() {
        #expect(
            validationMessage(#"{"modems": [{"gnss": {"lat": 91, "lon": 0}}]}"#)?
                .hasSuffix("modems[0].gnss.lat: is required: a latitude from -90 to 90") == true)
        #expect(
            validationMessage(#"{"modems": [{"gnss": {"lat": 1}}]}"#)?
                .hasSuffix("modems[0].gnss.lon: is required: a longitude from -180 to 180") == true)
        #expect(
            validationMessage(#"{"modems": [{"gnss": {"lat": 1, "lon": 2, "accuracy": -3}}]}"#)?
                .hasSuffix("modems[0].gnss.accuracy: must not be negative") == true)
        #expect(
            validationMessage(#"{"modems": [{"gnss": {"lat": 1, "lon": 2, "speed": 3}}]}"#)?.contains("speed") == true)
    }
}
