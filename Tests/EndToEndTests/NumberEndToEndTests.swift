import Testing
import TestSupport

/// `cellpath number`: exact stdout, stderr and exit code.
@Suite struct NumberEndToEndTests {
    @Test func internationalWithDoubleZeroPrefix() throws {
        let result = try CellpathBinary.run(["number", "0044 7940 448591"])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(result.stdout == """
            +44 7940 448591: valid mobile number (GB)
            E.164:           +447940448591
            E.164 digits:    447940448591
            international:   +44 7940 448591
            country code:    44
            national number: 7940448591
            region:          GB
            type:            mobile
            valid:           yes
            mobile capable:  yes

            """)
    }

    @Test func nationalNumberWithRegionAsJSON() throws {
        let result = try CellpathBinary.run(["number", "07940 448591", "--region", "GB", "--json"])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(result.stdout == """
            {
              "e164": "+447940448591",
              "e164_digits": "447940448591",
              "international": "+44 7940 448591",
              "country_code": 44,
              "national_number": "7940448591",
              "region": "GB",
              "type": "mobile",
              "valid": true,
              "mobile": true,
              "warnings": []
            }

            """)
    }

    @Test func regionFromTheEnvironmentConfiguration() throws {
        let result = try CellpathBinary.run(["number", "07940 448591", "--json"], environment: ["CELLPATH_REGION": "GB"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"e164\": \"+447940448591\""))
    }

    @Test func notANumberIsExit65WithTheReason() throws {
        let result = try CellpathBinary.run(["number", "abc"])
        #expect(result.status == 65)
        #expect(result.stdout == "")
        #expect(result.stderr == """
            error: this is not a phone number: it has no digits
            hint: use digits, one leading '+', spaces and - . ( ) /, or a tel: URI

            """)
    }

    @Test func errorAsJSONOnStdout() throws {
        let result = try CellpathBinary.run(["number", "abc", "--json"])
        #expect(result.status == 65)
        #expect(result.stdout == """
            {
              "error": {
                "kind": "dataError",
                "message": "this is not a phone number: it has no digits",
                "hint": "use digits, one leading '+', spaces and - . ( ) /, or a tel: URI",
                "exit_code": 65
              },
              "warnings": []
            }

            """)
    }

    @Test func nationalNumberWithoutRegion() throws {
        let result = try CellpathBinary.run(["number", "07940 448591"])
        #expect(result.status == 65)
        #expect(result.stderr == """
            error: the phone number has no country code, and no region was given to read it in
            hint: give it in international form (+44…) or pass --region

            """)
    }

    @Test func lineBreaksAreRefused() throws {
        let result = try CellpathBinary.run(["number", "+44 7940\r\n448591"])
        #expect(result.status == 65)
        #expect(result.stdout == "")
        #expect(result.stderr.hasPrefix("error: "))
        #expect(!result.stderr.contains("7940"), "the number must not be echoed")
    }

    @Test func fixedLineNumberWarns() throws {
        let result = try CellpathBinary.run(["number", "+44 20 7946 0018"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("+44 20 7946 0018: valid fixed line number (GB)\n"))
        #expect(result.stderr == "warning: this is a fixed line number: SubscriberCheck needs a mobile number (checks refuse it unless --allow-non-mobile)\n")
    }

    @Test func quietSilencesTheWarning() throws {
        let result = try CellpathBinary.run(["number", "+44 20 7946 0018", "-q"])
        #expect(result.status == 0)
        #expect(result.stderr == "")
    }

    @Test func innerDoubleZeroIsKept() throws {
        let result = try CellpathBinary.run(["number", "+1 650 200 0001", "--json"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"e164\": \"+16502000001\""))
    }

    @Test func missingArgument() throws {
        let result = try CellpathBinary.run(["number"])
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(result.stderr == """
            Error: missing expected argument '<phone>'
            Usage: cellpath number [--region <cc>] <phone>
              See 'cellpath number --help' for more information.

            """)
    }

    @Test func badRegionFlagIsAUsageError() throws {
        let result = try CellpathBinary.run(["number", "07940 448591", "--region", "Britain"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--region"))
    }
}
