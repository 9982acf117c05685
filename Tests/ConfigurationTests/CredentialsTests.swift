import CellpathCore
import Configuration
import FoundationEssentials
import Glibc
import SystemSupport
import TestSupport
import Testing

@Suite("tru.ID credentials and tru.json")
struct CredentialsTests {
    @Test("a good tru.json named by --tru-json gives client id, secret and data residency")
    func goodTruJSON() throws {
        let fixture = Fixture()
        let path = fixture.truJSON(id: "abc-123", secret: "top-secret-value", residency: "in")
        let config = try fixture.load(flags: ["tru-json": path])
        let credentials = try #require(try config.credentials)
        #expect(credentials.clientID == "abc-123")
        #expect(credentials.clientSecret == "top-secret-value")
        #expect(credentials.clientIDOrigin == .truJSON(path: path, field: "credentials[0].client_id"))
        #expect(credentials.clientSecretOrigin == .truJSON(path: path, field: "credentials[0].client_secret"))
        #expect(try config.dataResidency == .in)
        #expect(try config.dataResidency.apiBaseURL == "https://in.api.tru.id")
        #expect(config.origin(of: "truid.data_residency") == .truJSON(path: path, field: "data_residency"))
        #expect(try config.truJSONPath == path)
        #expect(config.files.last == ConfigurationFile(path: path, role: .truJSON, status: .loaded))
        #expect(config.warnings.isEmpty, "\(config.warnings)")
    }

    @Test(
        "a tru.json named by --tru-json is read with the caller's rights, one named by a file with the process's",
        .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func truJSONReadAsTheCaller() throws {
        let fixture = Fixture()  // root's directory, mode 0700: nobody cannot reach into it
        let path = fixture.truJSON(id: "root-only")
        let nobody = FileIdentity(uid: 65534, gid: 65534)
        let asCaller = ConfigurationLoader(
            environment: [:], flags: ["tru-json": path], systemPath: fixture.systemPath,
            userPath: fixture.userPath, caller: nobody)
        let error = #expect(throws: CellpathError.self) { try asCaller.load().credentials }
        #expect(error?.kind == .permission)
        #expect(error?.message == "couldn't read \(path) (named by flag --tru-json): Permission denied")
        fixture.system("[truid]\ntru_json=\(path)\n")
        let fromSystemFile = ConfigurationLoader(
            environment: [:], systemPath: fixture.systemPath, userPath: fixture.userPath,
            caller: nobody)
        #expect(try fromSystemFile.load().credentials?.clientID == "root-only")
    }

    @Test("[truid] tru_json in the user file, relative to that file")
    func truJSONFromFile() throws {
        let fixture = Fixture()
        let path = fixture.truJSON("user/tru.json", id: "from-user-file")
        fixture.user("[truid]\ntru_json=tru.json\n")
        let config = try fixture.load()
        #expect(try config.credentials?.clientID == "from-user-file")
        #expect(try config.truJSONPath == path)
        #expect(config.origin(of: "truid.tru_json") == .file(path: fixture.userPath, group: "truid", key: "tru_json"))
    }

    @Test("a tru.json without data_residency keeps the configured residency")
    func truJSONWithoutResidency() throws {
        let fixture = Fixture()
        let path = fixture.truJSON(residency: nil)
        let config = try fixture.load(environment: ["CELLPATH_DATA_RESIDENCY": "us"], flags: ["tru-json": path])
        #expect(try config.dataResidency == .us)
        #expect(try config.credentials != nil)
    }

    @Test("a residency that contradicts the tru.json is warned about")
    func residencyMismatch() throws {
        let fixture = Fixture()
        let path = fixture.truJSON(residency: "eu")
        fixture.user("[truid]\ntru_json=\(path)\n")
        let config = try fixture.load(flags: ["data-residency": "us"])
        #expect(try config.dataResidency == .us)
        #expect(config.warnings.contains { $0.contains("differs from 'eu' in \(path)") }, "\(config.warnings)")
    }

    @Test("a missing tru.json fails the settings it gives, naming the file and who named it; nothing else")
    func missingTruJSON() throws {
        let fixture = Fixture()
        let path = fixture.directory + "/absent/tru.json"
        let config = try fixture.load(environment: ["CELLPATH_TRU_JSON": path, "CELLPATH_REGION": "GB"])
        let error = #expect(throws: CellpathError.self) { try config.credentials }
        #expect(error?.kind == .configuration)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("environment CELLPATH_TRU_JSON") == true)
        #expect(error?.message.contains("No such file") == true, "\(error?.message ?? "")")
        #expect(throws: CellpathError.self) { try config.dataResidency }
        #expect(
            config.usableKeys == [
                "general.region", "general.profile", "truid.tru_json", "sim.prefix",
                "http.cacert", "http.hop_timeout", "http.timeout", "modem.apn", "modem.ip_type"
            ])
        #expect(try config.region == "GB")
        #expect(config.files.last == ConfigurationFile(path: path, role: .truJSON, status: .missing))
        let entry = try #require(config.entries.first { $0.key == "truid.client_id" })
        #expect(entry.value == nil)
        #expect(entry.origin == .truJSON(path: path, field: "credentials[0].client_id"))
        #expect(entry.error?.contains("No such file") == true)
        #expect(
            config.entries.filter { $0.error != nil }.map(\.key)
                == ["truid.data_residency", "truid.client_id", "truid.client_secret"])
    }

    @Test("a broken tru.json named below direct credentials leaves them usable, not the residency it may hold")
    func brokenTruJSONBelowCredentials() throws {
        let fixture = Fixture()
        fixture.user("[truid]\ntru_json=\(fixture.directory)/absent.json\n")
        let config = try fixture.load(environment: [
            "CELLPATH_CLIENT_ID": "env-id", "CELLPATH_CLIENT_SECRET": "env-secret"
        ])
        #expect(try config.credentials?.clientID == "env-id")
        // The file could have said where the credentials live; its named-by layer beats the default.
        #expect(throws: CellpathError.self) { try config.dataResidency }
        // Said by the environment, the residency no longer depends on the file.
        let withResidency = try fixture.load(environment: [
            "CELLPATH_CLIENT_ID": "env-id", "CELLPATH_CLIENT_SECRET": "env-secret",
            "CELLPATH_DATA_RESIDENCY": "us"
        ])
        #expect(try withResidency.dataResidency == .us)
    }

    @Test(
        "a malformed tru.json is an error that does not quote the file",
        arguments: [
            #"{"credentials": [{"client_id": "x", "client_secret": "leaky-secret""#,
            "client_secret=leaky-secret",
            ""
        ])
    func malformedTruJSON(_ text: String) throws {
        let fixture = Fixture()
        let path = fixture.write("tru.json", text)
        let config = try fixture.load(flags: ["tru-json": path])
        let error = #expect(throws: CellpathError.self) { try config.credentials }
        #expect(error?.kind == .configuration)
        #expect(error?.message == "\(path): not valid JSON (named by flag --tru-json)")
        #expect(error?.hint?.contains("leaky") == false)
        #expect(config.files.last?.status == .invalid("\(path): not valid JSON (named by flag --tru-json)"))
        #expect(!config.entries.contains { $0.error?.contains("leaky") == true })
    }

    @Test(
        "a tru.json without usable credentials is an error saying which field is missing",
        arguments: [
            (#"{"name": "p"}"#, "no credentials[0] entry"),
            (#"{"credentials": []}"#, "no credentials[0] entry"),
            (#"{"credentials": [{"client_secret": "s"}]}"#, "credentials[0].client_id is missing"),
            (#"{"credentials": [{"client_id": "i"}]}"#, "credentials[0].client_secret is missing"),
            (#"{"credentials": [{"client_id": "", "client_secret": "s"}]}"#, "credentials[0].client_id is missing"),
            (#"{"credentials": {"client_id": "i"}}"#, "credentials does not have the type tru.json uses"),
            (
                #"{"credentials": [{"client_id": 7, "client_secret": "s"}]}"#,
                "credentials[0].client_id does not have the type tru.json uses"
            )
        ])
    func truJSONWithoutCredentials(_ text: String, _ expected: String) throws {
        let fixture = Fixture()
        let path = fixture.write("tru.json", text)
        let config = try fixture.load(flags: ["tru-json": path])
        let error = #expect(throws: CellpathError.self) { try config.credentials }
        #expect(error?.kind == .configuration)
        #expect(error?.message == "\(path): \(expected)")
    }

    @Test("a tru.json data_residency outside eu|in|us is an error naming the field")
    func badResidencyInTruJSON() throws {
        let fixture = Fixture()
        let path = fixture.truJSON(residency: "mars")
        let config = try fixture.load(flags: ["tru-json": path])
        let error = #expect(throws: CellpathError.self) { try config.dataResidency }
        #expect(error?.message == "\(path) data_residency: invalid value 'mars': expected one of eu, in, us")
        #expect(try config.credentials?.clientID == "id-from-tru-json")
    }

    @Test("CELLPATH_CLIENT_ID and CELLPATH_CLIENT_SECRET")
    func environmentCredentials() throws {
        let fixture = Fixture()
        let config = try fixture.load(environment: [
            "CELLPATH_CLIENT_ID": "env-id", "CELLPATH_CLIENT_SECRET": "env-secret"
        ])
        let credentials = try #require(try config.credentials)
        #expect(credentials.clientID == "env-id")
        #expect(credentials.clientSecret == "env-secret")
        #expect(credentials.clientSecretOrigin == .environment("CELLPATH_CLIENT_SECRET"))
        #expect(try config.requireCredentials() == credentials)
    }

    @Test("a tru.json takes the precedence of the layer that named it")
    func truJSONPrecedence() throws {
        let fixture = Fixture()
        let path = fixture.truJSON(id: "json-id", secret: "json-secret")
        let environment = ["CELLPATH_CLIENT_ID": "env-id", "CELLPATH_CLIENT_SECRET": "env-secret"]
        // Named by the user file: the environment's direct credentials win.
        fixture.user("[truid]\ntru_json=\(path)\n")
        var config = try fixture.load(environment: environment)
        #expect(try config.credentials?.clientID == "env-id")
        #expect(try config.credentials?.clientSecret == "env-secret")
        // Named by a flag: the tru.json wins over the environment.
        config = try fixture.load(environment: environment, flags: ["tru-json": path])
        #expect(try config.credentials?.clientID == "json-id")
        #expect(try config.credentials?.clientSecret == "json-secret")
        // Named by the same layer as direct keys: the direct keys win.
        fixture.user("[truid]\ntru_json=\(path)\nclient_id=file-id\nclient_secret=file-secret\n")
        config = try fixture.load()
        #expect(try config.credentials?.clientID == "file-id")
        #expect(
            try config.credentials?.clientSecretOrigin
                == .file(path: fixture.userPath, group: "truid", key: "client_secret"))
    }

    @Test("incomplete or mixed credentials are warned about")
    func incompleteCredentials() throws {
        let fixture = Fixture()
        var config = try fixture.load(environment: ["CELLPATH_CLIENT_ID": "only-id"])
        #expect(try config.credentials == nil)
        #expect(
            config.warnings == [
                "tru.ID credentials incomplete: client_id is set (environment CELLPATH_CLIENT_ID) but no client_secret"
            ])
        let error = #expect(throws: CellpathError.self) { try config.requireCredentials() }
        #expect(error?.kind == .configuration)
        #expect(error?.hint?.contains("--tru-json") == true)

        fixture.user("[truid]\nclient_id=file-id\n")
        config = try fixture.load(environment: ["CELLPATH_CLIENT_SECRET": "env-secret"])
        #expect(try config.credentials?.clientID == "file-id")
        #expect(config.warnings.contains { $0.hasPrefix("the tru.ID client_id comes from \(fixture.userPath)") })
    }

    @Test("no flag carries a secret")
    func noSecretFlags() throws {
        let fixture = Fixture()
        for flag in ["client-secret", "--client-secret", "client-id"] {
            let error = #expect(throws: CellpathError.self) { try fixture.load(flags: [flag: "value"]) }
            #expect(error?.kind == .usage)
            #expect(error?.message == "tru.ID credentials are never taken from the command line")
        }
        #expect(
            !ConfigurationFlag.allCases.contains { $0.rawValue.contains("client") || $0.rawValue.contains("secret") })
    }

    @Test(
        "tru.json permissions: group/world access warns, 0600 does not",
        arguments: [
            (0o644 as mode_t, true), (0o640, true), (0o604, true), (0o600, false), (0o400, false)
        ])
    func truJSONPermissions(_ mode: mode_t, _ warns: Bool) throws {
        let fixture = Fixture()
        let path = fixture.truJSON(mode: mode)
        let config = try fixture.load(flags: ["tru-json": path])
        let warning = config.warnings.first { $0.hasPrefix("\(path) holds tru.ID credentials") }
        #expect((warning != nil) == warns, "\(config.warnings)")
        if warns {
            let octal = "0" + String(mode, radix: 8)
            #expect(
                warning
                    == "\(path) holds tru.ID credentials but is accessible by its group or others (mode \(octal)); run 'chmod 600 \(path)'"
            )
        }
    }

    @Test("a config file holding a client secret warns when readable by others; one without secrets does not")
    func configFilePermissions() throws {
        let fixture = Fixture()
        fixture.system("[truid]\nclient_id=sys-id\nclient_secret=sys-secret\n", mode: 0o644)
        var config = try fixture.load()
        #expect(config.warnings.contains { $0.hasPrefix("\(fixture.systemPath) holds a tru.ID client secret") })
        fixture.system("[truid]\nclient_id=sys-id\nclient_secret=sys-secret\n", mode: 0o600)
        config = try fixture.load()
        #expect(config.warnings.isEmpty, "\(config.warnings)")
        fixture.system("[truid]\nclient_id=sys-id\n[general]\nregion=GB\n", mode: 0o644)
        config = try fixture.load()
        #expect(!config.warnings.contains { $0.contains("holds") })
    }

    @Test("secrets are masked in entries, JSON, descriptions and errors")
    func masking() throws {
        let fixture = Fixture()
        let secret = "VerySecretValue-42"
        let path = fixture.truJSON(secret: secret)
        let config = try fixture.load(flags: ["tru-json": path])
        let entry = try #require(config.entries.first { $0.key == "truid.client_secret" })
        #expect(entry.isSecret)
        #expect(entry.value == "[redacted]")
        #expect(entry.origin == .truJSON(path: path, field: "credentials[0].client_secret"))
        #expect(config.entries.first { $0.key == "truid.client_id" }?.value == "id-from-tru-json")

        let json = String(decoding: try JSONEncoder().encode(config.entries), as: UTF8.self)
        #expect(json.contains(#""secret":true"#))
        let credentials = try #require(try config.credentials)
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [
            json, "\(config.entries)", "\(credentials)", String(reflecting: credentials), dumped,
            "\(config.warnings)"
        ] {
            #expect(!text.contains(secret), "secret leaked in \(text)")
        }
        #expect("\(credentials)" == "client_id=id-from-tru-json client_secret=[redacted]")

        let badSecret = try fixture.load(environment: [
            "CELLPATH_CLIENT_ID": "id", "CELLPATH_CLIENT_SECRET": "bad secret with spaces"
        ])
        let error = #expect(throws: CellpathError.self) { try badSecret.credentials }
        #expect(
            error?.message == "environment CELLPATH_CLIENT_SECRET: invalid value: a client secret contains no spaces")
        let badEntry = try #require(badSecret.entries.first { $0.key == "truid.client_secret" })
        #expect(badEntry.error == "invalid value: a client secret contains no spaces")
        #expect(badEntry.value == nil)
    }
}
