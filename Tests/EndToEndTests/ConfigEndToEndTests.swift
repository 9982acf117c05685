import Glibc
import Testing
import TestSupport

/// `cellpath config show`: precedence and origins as the user sees them, secrets masked.
@Suite struct ConfigEndToEndTests {
    /// A temporary directory with a system config file holding `contents`, removed afterwards.
    private func withSystemConfig(_ contents: String, _ body: (String) throws -> Void) throws {
        var template = Array("/tmp/cellpath-e2e-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        defer { _ = try? ProcessRunner.run(["rm", "-rf", dir]) }
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
        try withSystemConfig("[general]\nregion=FR\nprofile=staging\n[server]\nstaging=https://staging.example.test\n") { path in
            let result = try CellpathBinary.run(
                ["config", "show", "--json", "--hop-timeout", "7"],
                environment: ["CELLPATH_SYSTEM_CONFIG": path, "CELLPATH_REGION": "DE",
                              "CELLPATH_CLIENT_ID": "id-123", "CELLPATH_CLIENT_SECRET": "s3cr3t-value"])
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
        #expect(result.stdout == """
            files:
              PATH                                 ROLE    STATUS
              /nonexistent/cellpath.conf           system  missing
              /nonexistent/cellpath/cellpath.conf  user    missing
            settings:
              KEY                   VALUE        SECRET  SOURCE
              general.region        GB           no      environment CELLPATH_REGION
              general.profile       development  no      default
              truid.tru_json        -            no      -
              truid.data_residency  eu           no      default
              truid.client_id       -            no      -
              truid.client_secret   -            yes     -
              sim.prefix            cp-          no      default
              http.cacert           -            no      -
              http.hop_timeout      5            no      default
              http.timeout          30           no      default
            warnings: -

            """)
    }

    @Test func invalidFileValueIsAConfigurationError() throws {
        try withSystemConfig("[http]\nhop_timeout=soon\n") { path in
            let result = try CellpathBinary.run(["config", "show"], environment: ["CELLPATH_SYSTEM_CONFIG": path])
            #expect(result.status == 78)
            #expect(result.stdout == "")
            #expect(result.stderr.contains("[http] hop_timeout"))
        }
    }

    @Test func secretsNeverComeFromArgv() throws {
        let result = try CellpathBinary.run(["config", "show", "--client-secret", "x"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: unknown option '--client-secret'"))
    }
}
