import CellpathCore
import Glibc
import Testing

@testable import Configuration

@Suite("Configuration validation, warnings and profiles")
struct ValidationTests {
    @Test(
        "an invalid value in a file fails its setting only, with an error naming file, group and key",
        arguments: [
            ("general", "region", "GBR", "expected a two-letter ISO 3166 region code such as GB"),
            ("general", "region", "4X", "expected a two-letter ISO 3166 region code such as GB"),
            ("general", "profile", "has space", "expected a profile name of at most 32 letters, digits, '-' or '_'"),
            (
                "server", "development", "ftp://example.com",
                "expected an http:// or https:// base URL such as https://example.com/api"
            ),
            (
                "server", "production", "not a url",
                "expected an http:// or https:// base URL such as https://example.com/api"
            ),
            (
                "server", "development", "https://user:pw@example.com",
                "a base URL must not hold a user name or password"
            ),
            ("server", "development", "https://example.com/?x=1", "a base URL has no query ('?') or fragment ('#')"),
            ("truid", "data_residency", "asia", "expected one of eu, in, us"),
            ("truid", "client_id", "a:b", "a client id contains no ':' and no spaces"),
            (
                "sim", "prefix", "way-too-long-",
                "expected 1 to 8 letters, digits, '-' or '_', starting with a letter or digit (it prefixes namespace names)"
            ),
            (
                "sim", "prefix", "-cp",
                "expected 1 to 8 letters, digits, '-' or '_', starting with a letter or digit (it prefixes namespace names)"
            ),
            ("http", "timeout", "soon", "expected a number of seconds greater than 0 and at most 3600"),
            ("http", "hop_timeout", "0", "expected a number of seconds greater than 0 and at most 3600"),
            ("http", "hop_timeout", "-3", "expected a number of seconds greater than 0 and at most 3600"),
            ("http", "timeout", "nan", "expected a number of seconds greater than 0 and at most 3600"),
            ("http", "timeout", "7200", "expected a number of seconds greater than 0 and at most 3600"),
            (
                "modem", "apn", "my apn",
                "expected an access point name of at most 100 letters, digits, '-', '_' or '.' such as internet"
            ),
            (
                "modem", "apn", ".internet",
                "expected an access point name of at most 100 letters, digits, '-', '_' or '.' such as internet"
            ),
            (
                "modem", "apn", String(repeating: "a", count: 101),
                "expected an access point name of at most 100 letters, digits, '-', '_' or '.' such as internet"
            ),
            ("modem", "ip_type", "any", "expected one of ipv4, ipv6, ipv4v6")
        ])
    func invalidFileValue(_ group: String, _ key: String, _ value: String, _ problem: String) throws {
        let fixture = Fixture()
        fixture.user("[general]\nprofile=production\n[\(group)]\n\(key)=\(value)\n")
        let config = try fixture.load()
        let error = #expect(throws: CellpathError.self) { try config.read("\(group).\(key)") }
        #expect(error?.kind == .configuration)
        #expect(error?.message == "\(fixture.userPath) [\(group)] \(key): invalid value '\(value)': \(problem)")
        #expect(error?.hint == "Fix or remove '\(key)' in [\(group)] of \(fixture.userPath).")
        // Every other setting stays usable, and config show marks this one.
        let others = EffectiveConfiguration.keys.filter {
            $0 != "\(group).\(key)" && !(group == "truid" && $0.hasPrefix("truid.client_"))
        }
        #expect(others.allSatisfy(config.usableKeys.contains), "\(config.usableKeys)")
        let entry = try #require(config.entries.first { $0.key == "\(group).\(key)" })
        #expect(entry.value == nil)
        #expect(entry.error == "invalid value '\(value)': \(problem)")
        #expect(entry.origin == .file(path: fixture.userPath, group: group, key: key))
    }

    @Test("modem.ip_type: ipv4v6 by default, a file's value (any case), the environment above it")
    func bearerIPType() throws {
        let fixture = Fixture()
        #expect(try fixture.load().ipType == .ipv4v6)
        fixture.user("[modem]\nip_type=IPv4\n")
        #expect(try fixture.load().ipType == .ipv4)
        #expect(try fixture.load(environment: ["CELLPATH_IP_TYPE": "ipv6"]).ipType == .ipv6)
        let error = #expect(throws: CellpathError.self) {
            try fixture.load(environment: ["CELLPATH_IP_TYPE": "v6"]).ipType
        }
        #expect(
            error?.message == "environment CELLPATH_IP_TYPE: invalid value 'v6': expected one of ipv4, ipv6, ipv4v6")
    }

    @Test("an invalid environment variable names the variable")
    func invalidEnvironment() throws {
        let fixture = Fixture()
        let config = try fixture.load(environment: ["CELLPATH_TIMEOUT": "30s"])
        let error = #expect(throws: CellpathError.self) { try config.timeout }
        #expect(error?.kind == .configuration)
        #expect(
            error?.message
                == "environment CELLPATH_TIMEOUT: invalid value '30s': expected a number of seconds greater than 0 and at most 3600"
        )
        #expect(error?.hint == "Fix or unset CELLPATH_TIMEOUT.")
    }

    @Test("an invalid flag value is a usage error naming the flag")
    func invalidFlag() throws {
        let fixture = Fixture()
        var error = #expect(throws: CellpathError.self) { try fixture.load(flags: ["region": "United Kingdom"]) }
        #expect(error?.kind == .usage)
        #expect(
            error?.message
                == "flag --region: invalid value 'United Kingdom': expected a two-letter ISO 3166 region code such as GB"
        )
        error = #expect(throws: CellpathError.self) { try fixture.load(flags: ["timeout": ""]) }
        #expect(error?.message == "flag --timeout: invalid value '': is empty")
    }

    @Test("an unknown flag name is a programming error")
    func unknownFlag() throws {
        let fixture = Fixture()
        let error = #expect(throws: CellpathError.self) { try fixture.load(flags: ["colour": "never"]) }
        #expect(error?.kind == .internalError)
    }

    @Test("control characters (GKeyFile escapes included) are rejected")
    func controlCharacters() throws {
        let fixture = Fixture()
        fixture.user("[general]\nregion=G\\nB\n")
        let error = #expect(throws: CellpathError.self) { try fixture.load().region }
        #expect(
            error?.message == "\(fixture.userPath) [general] region: invalid value 'G\nB': contains control characters")
        let envError = #expect(throws: CellpathError.self) {
            try fixture.load(environment: ["CELLPATH_PROFILE": "a\r\nb"]).profile
        }
        #expect(envError?.kind == .configuration)
    }

    @Test("a file that is not an INI file fails every setting it could set, not those set above it")
    func syntaxError() throws {
        let fixture = Fixture()
        fixture.system("[general\nregion=GB\n")
        var config = try fixture.load(environment: [
            "CELLPATH_REGION": "SE", "CELLPATH_SERVER_URL": "https://x.example.com"
        ])
        let error = #expect(throws: CellpathError.self) { try config.hopTimeout }
        #expect(error?.kind == .configuration)
        #expect(error?.message.hasPrefix("\(fixture.systemPath): ") == true)
        #expect(config.usableKeys == ["general.region"])
        #expect(try config.region == "SE")
        #expect(throws: CellpathError.self) { try config.serverBaseURL }
        guard case .invalid = config.files.first?.status else {
            Issue.record("status: \(String(describing: config.files.first?.status))")
            return
        }
        let entry = try #require(config.entries.first { $0.key == "http.timeout" })
        #expect(entry.origin == .brokenFile(path: fixture.systemPath))
        #expect(entry.error?.isEmpty == false)

        config = try fixture.load(environment: [
            "CELLPATH_PROFILE": "lab", "CELLPATH_SERVER_URL": "https://x.example.com"
        ])
        #expect(try config.serverBaseURL == "https://x.example.com")
        fixture.system("region=GB\n")
        #expect(throws: CellpathError.self) { try fixture.load().region }
    }

    @Test("a file that is not an INI file is reported once with the line, never quoting it")
    func syntaxErrorSaysWhereWithoutQuoting() throws {
        let fixture = Fixture()
        fixture.system("# comment\n[truid]\nclient_id=id\n  s3cr3t-token-line\n")
        let config = try fixture.load()
        let error = #expect(throws: CellpathError.self) { try config.timeout }
        #expect(
            error?.message == "\(fixture.systemPath): line 4 is not a [group] line, a key=value line or a # comment")
        guard case .invalid(let reason) = config.files.first?.status else {
            Issue.record("status: \(String(describing: config.files.first?.status))")
            return
        }
        #expect(reason == "line 4 is not a [group] line, a key=value line or a # comment")
        #expect(config.entries.allSatisfy { $0.error == nil || $0.error == "the file is not an INI file (see files)" })
        #expect(!config.entries.contains { $0.error?.contains("s3cr3t") == true })
    }

    @Test(arguments: [
        ("region=GB\n", "line 1: a key=value line before the first [group] line"),
        ("[general\nregion=GB\n", "line 1: a group line is '[name]'"),
        ("[general]\n=GB\n", "line 2: a value without a key"),
        ("\n\n[general]\nregion GB\n", "line 4 is not a [group] line, a key=value line or a # comment")
    ])
    func syntaxProblemsByLine(text: String, problem: String) {
        #expect(KeyFile.syntaxProblem(in: Array(text.utf8)) == problem)
    }

    @Test("a value GKeyFile cannot read fails only its own key, and the error does not quote it")
    func unreadableValue() throws {
        let fixture = Fixture()
        let secret: [UInt8] = Array("s3cr3t".utf8) + [0xFF]
        fixture.write(
            fixture.userPath,
            bytes: Array("[general]\nregion=G".utf8) + [0xFF] + Array("B\n[truid]\nclient_secret=".utf8)
                + secret + Array("\nclient_id=id\n[http]\ntimeout=9\n".utf8))
        let config = try fixture.load()
        let error = #expect(throws: CellpathError.self) { try config.region }
        #expect(
            error?.message
                == "\(fixture.userPath) [general] region: the value is not UTF-8 text or has a bad escape sequence")
        #expect(error?.hint == "Fix or remove 'region' in [general] of \(fixture.userPath).")
        #expect(try config.timeout == .seconds(9))
        #expect(
            config.usableKeys
                == EffectiveConfiguration.keys.filter {
                    !["general.region", "truid.client_id", "truid.client_secret"].contains($0)
                })
        let secretError = #expect(throws: CellpathError.self) { try config.credentials }
        #expect(secretError?.message.contains("s3cr3t") == false)
        #expect(!config.entries.contains { $0.error?.contains("s3cr3t") == true })
    }

    @Test("a configuration path that is not a regular file is an error naming it")
    func directoryAsFile() throws {
        let fixture = Fixture()
        mkdir(fixture.systemPath, 0o755)
        let error = #expect(throws: CellpathError.self) { try fixture.load().timeout }
        #expect(error?.kind == .configuration)
        #expect(error?.message == "\(fixture.systemPath): Not a regular file")
    }

    @Test("values are normalised: region upper case, residency lower case, URL without trailing '/'")
    func normalisation() throws {
        let fixture = Fixture()
        fixture.user(
            "[general]\nregion = gb \n[truid]\ndata_residency=US\n[server]\ndevelopment=https://dev.example.com/base/\n"
        )
        let config = try fixture.load()
        #expect(try config.region == "GB")
        #expect(try config.dataResidency == .us)
        #expect(try config.serverBaseURL == "https://dev.example.com/base")
    }

    @Test("unknown groups and keys are warned about, with the nearest name, and ignored")
    func unknownKeys() throws {
        let fixture = Fixture()
        fixture.user("[generl]\nregion=FR\n[general]\nregoin=DE\nfoo=1\n[http]\ncacert=/ca.pem\n[plugins]\nx=y\n")
        let config = try fixture.load()
        #expect(try config.region == nil)
        #expect(try config.caFile == "/ca.pem")
        #expect(
            config.warnings == [
                "\(fixture.userPath): unknown group [generl] ignored; did you mean [general]?",
                "\(fixture.userPath): unknown key 'regoin' in [general] ignored; did you mean 'region'?",
                "\(fixture.userPath): unknown key 'foo' in [general] ignored",
                "\(fixture.userPath): unknown group [plugins] ignored"
            ])
    }

    @Test("a misspelt CELLPATH_ variable is warned about; unrelated ones are not")
    func environmentTypos() throws {
        let fixture = Fixture()
        let config = try fixture.load(environment: [
            "CELLPATH_REGOIN": "GB", "CELLPATH_REQUIRE_ROOT_TESTS": "1",
            "CELLPATH_BIN": "/x", "CELLPATH_SYSTEM_CONFIG": "/nonexistent"
        ])
        #expect(
            config.warnings == ["environment CELLPATH_REGOIN is not a cellpath setting; did you mean CELLPATH_REGION?"])
    }

    @Test("an invalid value overridden by a higher layer is a warning, not an error")
    func overriddenInvalid() throws {
        let fixture = Fixture()
        fixture.system("[general]\nregion=XYZ\n")
        let config = try fixture.load(environment: ["CELLPATH_REGION": "SE"])
        #expect(try config.region == "SE")
        #expect(
            config.warnings == [
                "\(fixture.systemPath) [general] region: invalid value 'XYZ': expected a two-letter ISO 3166 region code such as GB (overridden by environment CELLPATH_REGION)"
            ])
    }

    @Test("a hop timeout above the overall timeout is warned about")
    func hopAboveTotal() throws {
        let fixture = Fixture()
        let config = try fixture.load(flags: ["hop-timeout": "40"])
        #expect(config.warnings.count == 1)
        #expect(
            config.warnings.first?.hasPrefix(
                "http.hop_timeout 40 s (flag --hop-timeout) is longer than http.timeout 30 s") == true)
    }

    @Test("profiles: one server URL each, chosen by profile; the override applies to the active one only")
    func profiles() throws {
        let fixture = Fixture()
        fixture.system("[server]\ndevelopment=http://localhost:8080\nproduction=https://api.example.com\n")
        var config = try fixture.load()
        #expect(try config.profile == "development")
        #expect(config.profiles == ["development", "production"])
        #expect(try config.serverBaseURL == "http://localhost:8080")
        #expect(try config.requireServerBaseURL() == "http://localhost:8080")
        #expect(try config.serverBaseURL(for: "production") == "https://api.example.com")
        #expect(
            config.entries.map(\.key).prefix(4) == [
                "general.region", "general.profile", "server.development", "server.production"
            ])

        config = try fixture.load(flags: ["profile": "production"])
        #expect(try config.serverBaseURL == "https://api.example.com")
        #expect(
            config.origin(of: "server.production")
                == .file(path: fixture.systemPath, group: "server", key: "production"))

        config = try fixture.load(environment: [
            "CELLPATH_PROFILE": "production",
            "CELLPATH_SERVER_URL": "https://override.example.com/"
        ])
        #expect(try config.serverBaseURL == "https://override.example.com")
        #expect(config.origin(of: "server.production") == .environment("CELLPATH_SERVER_URL"))
        #expect(try config.serverBaseURL(for: "development") == "http://localhost:8080")

        config = try fixture.load(
            environment: ["CELLPATH_SERVER_URL": "https://env.example.com"],
            flags: ["server-url": "https://flag.example.com"])
        #expect(try config.serverBaseURL == "https://flag.example.com")
        #expect(config.origin(of: "server.development") == .flag("server-url"))
    }

    @Test("a chosen profile without a server URL is warned about and required access fails")
    func profileWithoutURL() throws {
        let fixture = Fixture()
        fixture.user("[server]\ndevelopment=http://localhost:8080\n")
        let config = try fixture.load(flags: ["profile": "staging"])
        #expect(try config.serverBaseURL == nil)
        #expect(
            config.warnings == ["profile 'staging' (flag --profile) has no server URL; set [server] staging=https://…"])
        let error = #expect(throws: CellpathError.self) { try config.requireServerBaseURL() }
        #expect(error?.kind == .configuration)
        #expect(error?.message == "no server URL for profile 'staging'")
    }

    @Test("a [server] key that cannot be a profile name is warned about")
    func badProfileKey() throws {
        let fixture = Fixture()
        fixture.user("[server]\nmy.profile=https://x.example.com\n")
        let config = try fixture.load()
        #expect(config.profiles.isEmpty)
        #expect(config.warnings.count == 1)
        #expect(config.warnings.first?.hasPrefix("\(fixture.userPath): [server] my.profile ignored") == true)
    }
}
