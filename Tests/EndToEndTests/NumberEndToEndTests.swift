import TestSupport
import Testing

/// `cellpath number`: exact stdout, stderr and exit code.
@Suite(.ownThreads) struct NumberEndToEndTests {
    @Test func internationalWithDoubleZeroPrefix() throws {
        let result = try CellpathBinary.run(["number", "0044 7940 448591"])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(
            result.stdout == """
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
        #expect(
            result.stdout == """
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
        let result = try CellpathBinary.run(
            ["number", "07940 448591", "--json"], environment: ["CELLPATH_REGION": "GB"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"e164\": \"+447940448591\""))
    }

    @Test func notANumberIsExit65WithTheReason() throws {
        let result = try CellpathBinary.run(["number", "abc"])
        #expect(result.status == 65)
        #expect(result.stdout == "")
        #expect(
            result.stderr == """
                error: this is not a phone number: it has no digits
                hint: use digits, one leading '+', spaces and - . ( ) /, or a tel: URI

                """)
    }

    @Test func errorAsJSONOnStdout() throws {
        let result = try CellpathBinary.run(["number", "abc", "--json"])
        #expect(result.status == 65)
        #expect(
            result.stdout == """
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
        #expect(
            result.stderr == """
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
        #expect(result.stdout.hasPrefix("+44 20 7946 0018: valid fixed-line number (GB)\n"))
        #expect(
            result.stderr
                == "warning: this is a fixed-line number: SubscriberCheck and PhoneCheck need a mobile number\n")
    }

    @Test func fixedLineOrMobileIsNotCalledMobile() throws {
        let result = try CellpathBinary.run(["number", "+1 201 555 0123"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("+1 201-555-0123: valid fixed-line or mobile number (US)\n"))
        #expect(result.stdout.contains("type:            fixedLineOrMobile\n"))
        #expect(result.stderr == "")
    }

    @Test func trunkPrefixAfterTheCountryCodeIsRefused() throws {
        for input in ["+4407940448591", "0044 07940 448591"] {
            let result = try CellpathBinary.run(["number", input], environment: ["CELLPATH_REGION": "GB"])
            #expect(result.status == 65)
            #expect(result.stdout == "")
            #expect(
                result.stderr == """
                    error: the phone number has the trunk prefix 0 after +44, which international form never has
                    hint: write it without the 0 after +44 (SubscriberCheck needs the exact E.164), or pass --region GB to have it dropped

                    """)
        }
    }

    @Test func trunkPrefixIsDroppedWhenRegionSaysSo() throws {
        let result = try CellpathBinary.run(["number", "+44 07940 448591", "--region", "GB", "--json"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"e164\": \"+447940448591\""))
        #expect(result.stderr == "warning: dropped the trunk prefix 0 written after +44: E.164 numbers have none\n")
        // Written as optional, "(0)" needs no --region and gets no warning.
        let optional = try CellpathBinary.run(["number", "+44 (0)7940 448591", "--json"])
        #expect(optional.status == 0)
        #expect(optional.stdout.contains("\"e164\": \"+447940448591\""))
        #expect(optional.stderr == "")
    }

    @Test func internationalNetworksAreNamed() throws {
        let mobile = try CellpathBinary.run(["number", "+882 34 21234"])
        #expect(mobile.status == 0)
        #expect(mobile.stdout.hasPrefix("+882 34 21234: valid mobile number (international network +882)\n"))
        #expect(mobile.stdout.contains("region:          001\n"))
        let satellite = try CellpathBinary.run(["number", "+870 773 111 632", "--json"])
        #expect(satellite.status == 0)
        #expect(satellite.stdout.contains("\"region\": \"001\""))
        let voip = try CellpathBinary.run(["number", "+883 510012345"])
        #expect(voip.status == 0)
        #expect(voip.stdout.hasPrefix("+883 510 012 345: valid VoIP number (international network +883)\n"))
        #expect(voip.stderr == "warning: this is a VoIP number: SubscriberCheck and PhoneCheck need a mobile number\n")
        let short = try CellpathBinary.run(["number", "+882 12345"])
        #expect(short.status == 65)
        #expect(
            short.stderr
                == "error: the phone number is not valid: it is too short for a +882 (international network) number\n")
    }

    @Test func extensionsAreRefused() throws {
        for input in [
            "+44 7940 448591 ext. 123", "+44 7940 448591 x123", "+447940448591;ext=123", "tel:+447940448591;ext=123"
        ] {
            let result = try CellpathBinary.run(["number", input])
            #expect(result.status == 65, "\(input)")
            #expect(result.stderr.hasPrefix("error: the phone number has an extension"), "\(input): \(result.stderr)")
            #expect(result.stderr.contains("SubscriberCheck checks the number of a SIM"))
        }
    }

    @Test func digitsOfOtherScriptsAreRead() throws {
        for input in ["+٤٤ ٧٩٤٠ ٤٤٨٥٩١", "＋４４ ７９４０ ４４８５９１"] {
            let result = try CellpathBinary.run(["number", input, "--json"])
            #expect(result.status == 0, "\(input): \(result.stderr)")
            #expect(result.stdout.contains("\"e164\": \"+447940448591\""))
        }
        let mixed = try CellpathBinary.run(["number", "+44 79٤0 448591"])
        #expect(mixed.status == 65)
        #expect(mixed.stderr.hasPrefix("error: the phone number mixes digits of different scripts\n"))
    }

    /// Every option that number's help, warnings and hints mention is one that `number` accepts.
    @Test func messagesNameOnlyOptionsThatExist() throws {
        let help = try CellpathBinary.run(["number", "--help"]).stdout
        let accepted = Set(
            help.split(separator: "\n").filter { $0.hasPrefix("  -") }.flatMap { Self.options(String($0)) })
        #expect(accepted.contains("--region"))
        var texts = [help]
        for arguments in [
            ["+44 20 7946 0018"], ["+4407940448591"], ["07940 448591"], ["+44 07940 448591", "--region", "GB"],
            ["+54 11 15 1234 5678"], ["+883 510012345"], ["+44 7940 448591 x1"]
        ] {
            let result = try CellpathBinary.run(["number"] + arguments)
            texts += [result.stdout, result.stderr]
        }
        let mentioned = Set(texts.flatMap(Self.options))
        #expect(!mentioned.isEmpty)
        #expect(
            mentioned.subtracting(accepted).isEmpty,
            "not options of cellpath number: \(mentioned.subtracting(accepted))")
    }

    /// The `--long-option` words of `text`.
    private static func options(_ text: String) -> [String] {
        text.split { !($0.isLetter || $0.isNumber || $0 == "-") }.map(String.init)
            .filter { $0.hasPrefix("--") && $0.count > 2 }
    }

    @Test func brokenSettingsOfOtherCommandsDoNotMatter() throws {
        let environment = [
            "CELLPATH_TRU_JSON": "/nonexistent/tru.json", "CELLPATH_TIMEOUT": "soon",
            "CELLPATH_REGION": "GB"
        ]
        for input in ["+44 7940 448591", "07940 448591"] {
            let result = try CellpathBinary.run(["number", input, "--json"], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("\"e164\": \"+447940448591\""))
            #expect(result.stderr == "")
        }
    }

    @Test func aBrokenRegionFailsOnlyNumbersThatNeedIt() throws {
        let environment = ["CELLPATH_REGION": "G1"]
        let international = try CellpathBinary.run(["number", "+44 7940 448591"], environment: environment)
        #expect(international.status == 0)
        let national = try CellpathBinary.run(["number", "07940 448591"], environment: environment)
        #expect(national.status == 78)
        #expect(national.stderr.hasPrefix("error: environment CELLPATH_REGION: invalid value 'G1'"))
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
        #expect(
            result.stderr == """
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

    @Test func numberWrittenAsSeveralWords() throws {
        let result = try CellpathBinary.run(["number", "07940", "448591", "--region", "GB", "--json"])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(result.stdout.contains("\"e164\": \"+447940448591\""))
        let international = try CellpathBinary.run(["number", "+44", "7940", "448591", "--json"])
        #expect(international.stdout.contains("\"e164\": \"+447940448591\""))
    }

    @Test func checksTakeANumberWrittenAsSeveralWords() throws {
        // Parsed as one number, the command goes on to need a backend (none is configured here).
        let result = try CellpathBinary.run(["phone-check", "07940", "448591", "--region", "GB", "--interface", "wwan0"]
        )
        #expect(result.status == 78)
        #expect(result.stderr.hasPrefix("error: no backend"))
    }
}
