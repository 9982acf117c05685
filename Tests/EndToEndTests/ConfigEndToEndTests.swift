import Glibc
import SystemSupport
import TestSupport
import Testing

/// `cellpath config show`: precedence and origins as the user sees them, secrets masked.
@Suite(.ownThreads) struct ConfigEndToEndTests {
    /// A temporary directory with a system config file holding `contents`, removed afterwards.
    private func withSystemConfig(_ contents: String, _ body: (String) throws -> Void) throws {
        let dir = try TemporaryDirectory.make("cellpath-e2e")
        defer { FileSystem.removeTree(dir) }
        let path = dir + "/cellpath.conf"
        let file = fopen(path, "w")!
        fputs(contents, file)
        fclose(file)
        try body(path)
    }

    /// One setting as `config show --json` prints it inside the settings list.
    private func setting(_ key: String, _ value: String, _ source: String) -> String {
        "\"key\": \"\(key)\",\n      \"value\": \"\(value)\",\n      \"secret\": false,\n      \"source\": \"\(source)\""
    }

    @Test func precedenceAndOriginsAsJSON() throws {
        try withSystemConfig("[general]\nregion=FR\nprofile=staging\n[server]\nstaging=https://staging.example.test\n")
        { path in
            let result = try CellpathBinary.run(
                ["config", "show", "--json", "--hop-timeout", "7"],
                environment: [
                    "CELLPATH_SYSTEM_CONFIG": path, "CELLPATH_REGION": "DE",
                    "CELLPATH_CLIENT_ID": "id-123", "CELLPATH_CLIENT_SECRET": "s3cr3t-value"
                ])
            #expect(result.status == 0)
            #expect(result.stderr == "")
            let out = result.stdout
            // Environment beats the file; the flag beats the default; the file's profile stays.
            #expect(out.contains(setting("general.region", "DE", "environment CELLPATH_REGION")))
            #expect(out.contains(setting("general.profile", "staging", "\(path) [general] profile")))
            #expect(out.contains(setting("http.hop_timeout", "7", "flag --hop-timeout")))
            #expect(!out.contains("s3cr3t-value"), "the secret must be masked")
            #expect(out.contains("\"status\": \"loaded\""))
        }
    }

    @Test func humanTable() throws {
        let result = try CellpathBinary.run(["config", "show"], environment: ["CELLPATH_REGION": "GB"])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                files:
                  PATH                                 ROLE    STATUS
                  /nonexistent/cellpath.conf           system  missing
                  /nonexistent/cellpath/cellpath.conf  user    missing
                settings:
                  KEY                      VALUE                        SECRET  SOURCE                       ERROR
                  general.region           GB                           no      environment CELLPATH_REGION  -
                  general.profile          development                  no      default                      -
                  truid.tru_json           -                            no      -                            -
                  truid.data_residency     eu                           no      default                      -
                  truid.api_base           -                            no      -                            -
                  truid.client_id          -                            no      -                            -
                  truid.client_secret      -                            yes     -                            -
                  sim.prefix               cp-                          no      default                      -
                  http.cacert              -                            no      -                            -
                  http.hop_timeout         5                            no      default                      -
                  http.timeout             30                           no      default                      -
                  modem.apn                -                            no      -                            -
                  modem.ip_type            ipv4v6                       no      default                      -
                  twilio.api_base          https://verify.twilio.com    no      default                      -
                  twilio.account_sid       -                            no      -                            -
                  twilio.auth_token        -                            yes     -                            -
                  twilio.service_sid       -                            no      -                            -
                  vonage.api_base          https://api.nexmo.com        no      default                      -
                  vonage.application_id    -                            no      -                            -
                  vonage.private_key       -                            no      -                            -
                  vonage.api_key           -                            no      -                            -
                  vonage.api_secret        -                            yes     -                            -
                  vonage.brand             cellpath                     no      default                      -
                  vonage.network_api_base  https://api-eu.vonage.com    no      default                      -
                  vonage.oidc_base         https://oidc.idp.vonage.com  no      default                      -
                  vonage.redirect_uri      -                            no      -                            -
                  serve.provider           truid                        no      default                      -
                  camara.api_root          -                            no      -                            -
                  camara.issuer            -                            no      -                            -
                  camara.client_id         -                            no      -                            -
                  camara.key_file          -                            no      -                            -
                  camara.redirect_uri      -                            no      -                            -
                warnings: -

                """)
    }

    /// `fetch --apn ""` asks for the modem's provisioned context: it is no invalid empty
    /// `modem.apn`; an APN that cannot be one is a usage error before any packet.
    @Test func anEmptyAPNIsTheProvisionedContextAndABadOneAUsageError() throws {
        let fetch = [
            "fetch", "--interface", "lo", "--allow-any-interface", "--dns", "127.0.0.1", "--timeout", "2",
            "http://127.0.0.1:9/"
        ]
        let empty = try CellpathBinary.run(fetch + ["--apn", ""])
        #expect(empty.status != 64 && !empty.stderr.contains("--apn"), "\(empty.stderr)")
        let bad = try CellpathBinary.run(fetch + ["--apn", "my apn"])
        #expect(bad.status == 64)
        #expect(
            bad.stderr.hasPrefix("Error: flag --apn: invalid value 'my apn': expected an access point name"),
            "\(bad.stderr)")
    }

    @Test func invalidFileValueIsMarkedAndFailsOnlyTheCommandsThatNeedIt() throws {
        try withSystemConfig("[http]\nhop_timeout=soon\n") { path in
            let environment = ["CELLPATH_SYSTEM_CONFIG": path]
            let shown = try CellpathBinary.run(["config", "show"], environment: environment)
            #expect(shown.status == 0)
            #expect(shown.stderr == "")
            let row = shown.stdout.split(separator: "\n").first { $0.hasPrefix("  http.hop_timeout") }
            #expect(
                row?.hasSuffix(
                    "\(path) [http] hop_timeout  invalid value 'soon': expected a number of seconds "
                        + "greater than 0 and at most 3600") == true, "\(row ?? "")")
            #expect(shown.stdout.contains("  http.timeout             30 "))
            #expect(
                shown.stdout.hasSuffix(
                    "\nnot usable: http.hop_timeout (see ERROR); commands that need them fail with exit 78\n"))

            let json = try CellpathBinary.run(["config", "show", "--json"], environment: environment)
            #expect(json.status == 0)
            #expect(
                json.stdout.contains(
                    """
                          "key": "http.hop_timeout",
                          "value": null,
                          "secret": false,
                          "source": "\(path) [http] hop_timeout",
                          "error": "invalid value 'soon': expected a number of seconds greater than 0 and at most 3600"
                    """))
            #expect(json.stdout.contains("\"source\": \"default\",\n      \"error\": null"))

            // fetch needs the hop timeout: it fails before sending anything; number does not.
            let fetch = try CellpathBinary.run(
                ["fetch", "--interface", "lo", "--dns", "127.0.0.1", "http://192.0.2.1/"],
                environment: environment)
            #expect(fetch.status == 78)
            #expect(fetch.stderr.hasPrefix("error: \(path) [http] hop_timeout: invalid value 'soon'"))
            let number = try CellpathBinary.run(["number", "+44 7940 448591"], environment: environment)
            #expect(number.status == 0)
        }
    }

    @Test func missingTruJSONIsMarked() throws {
        let result = try CellpathBinary.run(
            ["config", "show", "--json"],
            environment: ["CELLPATH_TRU_JSON": "/nonexistent/tru.json"])
        #expect(result.status == 0)
        #expect(
            result.stdout.contains(
                """
                      "path": "/nonexistent/tru.json",
                      "role": "tru.json",
                      "status": "missing"
                """))
        #expect(
            result.stdout.contains(
                """
                      "key": "truid.client_id",
                      "value": null,
                      "secret": false,
                      "source": "/nonexistent/tru.json credentials[0].client_id",
                      "error": "couldn't read /nonexistent/tru.json (named by environment CELLPATH_TRU_JSON): No such file or directory"
                """))
        #expect(result.stdout.contains("\"key\": \"truid.tru_json\",\n      \"value\": \"/nonexistent/tru.json\""))
    }

    @Test func unparsableFileIsMarked() throws {
        try withSystemConfig("[general\nregion=GB\n") { path in
            let result = try CellpathBinary.run(
                ["config", "show", "--json"],
                environment: ["CELLPATH_SYSTEM_CONFIG": path, "CELLPATH_TIMEOUT": "12"])
            #expect(result.status == 0)
            #expect(result.stdout.contains("\"status\": \"invalid: "))
            #expect(
                result.stdout.contains(
                    "\"key\": \"general.region\",\n      \"value\": null,\n      \"secret\": false,\n      \"source\": \"\(path)\""
                ))
            #expect(result.stdout.contains(setting("http.timeout", "12", "environment CELLPATH_TIMEOUT")))
        }
    }

    @Test func badFlagValueIsStillAUsageError() throws {
        let result = try CellpathBinary.run(["config", "show", "--timeout", "soon"])
        #expect(result.status == 64)
        #expect(result.stdout == "")
    }

    @Test func secretsNeverComeFromArgv() throws {
        let result = try CellpathBinary.run(["config", "show", "--client-secret", "x"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: unknown option '--client-secret'"))
    }
}
