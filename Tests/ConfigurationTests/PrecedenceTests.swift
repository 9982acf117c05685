import CellpathCore
import Configuration
import Glibc
import Testing

@Suite("Configuration precedence and origins")
struct PrecedenceTests {
    @Test("with no files, no environment and no flags every setting has its default")
    func defaults() throws {
        let fixture = Fixture()
        let config = try fixture.load()
        #expect(try config.region == nil)
        #expect(try config.profile == "development")
        #expect(try config.dataResidency == .eu)
        #expect(try config.apiBaseURL == "https://eu.api.tru.id")
        #expect(try config.simPrefix == "cp-")
        #expect(try config.hopTimeout == .seconds(5))
        #expect(try config.timeout == .seconds(30))
        #expect(try config.apn == nil)
        #expect(try config.ipType == .ipv4v6)
        #expect(try config.credentials == nil)
        #expect(try config.caFile == nil)
        #expect(try config.serverBaseURL == nil)
        #expect(config.warnings.isEmpty)
        #expect(config.origin(of: "general.profile") == .builtIn)
        #expect(config.origin(of: "general.region") == nil)
        #expect(config.files.map(\.status) == [.missing, .missing])
        #expect(config.files.map(\.role) == [.system, .user])
    }

    /// One setting given in every layer: (key, env var, flag, values for system, user, env, flag).
    struct Layered: Sendable, CustomTestStringConvertible {
        var group: String, key: String, environment: String, flag: String
        var values: [String]
        var read: @Sendable (EffectiveConfiguration) throws -> String?
        var testDescription: String { "\(group).\(key)" }
    }

    static let layered: [Layered] = [
        Layered(
            group: "general", key: "region", environment: "CELLPATH_REGION", flag: "region",
            values: ["FR", "DE", "ES", "IT"], read: { try $0.region }),
        Layered(
            group: "general", key: "profile", environment: "CELLPATH_PROFILE", flag: "profile",
            values: ["alpha", "beta", "gamma", "delta"], read: { try $0.profile }),
        Layered(
            group: "truid", key: "data_residency", environment: "CELLPATH_DATA_RESIDENCY", flag: "data-residency",
            values: ["in", "us", "eu", "in"], read: { try $0.dataResidency.rawValue }),
        Layered(
            group: "truid", key: "api_base", environment: "CELLPATH_API_BASE", flag: "api-base",
            values: ["https://a.test", "https://b.test", "http://c.test:8080", "https://d.test/api"],
            read: { try $0.apiBaseURL }),
        Layered(
            group: "http", key: "hop_timeout", environment: "CELLPATH_HOP_TIMEOUT", flag: "hop-timeout",
            values: ["1", "2", "3", "4"], read: { try "\($0.hopTimeout.components.seconds)" }),
        Layered(
            group: "http", key: "timeout", environment: "CELLPATH_TIMEOUT", flag: "timeout",
            values: ["10", "20", "40", "50"], read: { try "\($0.timeout.components.seconds)" }),
        Layered(
            group: "sim", key: "prefix", environment: "CELLPATH_SIM_PREFIX", flag: "prefix",
            values: ["a-", "b-", "c-", "d-"], read: { try $0.simPrefix }),
        Layered(
            group: "modem", key: "apn", environment: "CELLPATH_APN", flag: "apn",
            values: ["internet", "web.operator.test", "iot-apn", "m2m_data"], read: { try $0.apn }),
        Layered(
            group: "http", key: "cacert", environment: "CELLPATH_CA_FILE", flag: "cacert",
            values: ["/etc/a.pem", "/etc/b.pem", "/etc/c.pem", "/etc/d.pem"], read: { try $0.caFile })
    ]

    @Test("system < user < environment < flags", arguments: layered)
    func precedence(_ setting: Layered) throws {
        let fixture = Fixture()
        let line = { (value: String) in "[\(setting.group)]\n\(setting.key)=\(value)\n" }
        fixture.system(line(setting.values[0]))
        var config = try fixture.load()
        #expect(try setting.read(config) == setting.values[0])
        #expect(
            config.origin(of: "\(setting.group).\(setting.key)")
                == .file(path: fixture.systemPath, group: setting.group, key: setting.key))

        fixture.user(line(setting.values[1]))
        config = try fixture.load()
        #expect(try setting.read(config) == setting.values[1])
        #expect(
            config.origin(of: "\(setting.group).\(setting.key)")
                == .file(path: fixture.userPath, group: setting.group, key: setting.key))

        let environment = [setting.environment: setting.values[2]]
        config = try fixture.load(environment: environment)
        #expect(try setting.read(config) == setting.values[2])
        #expect(config.origin(of: "\(setting.group).\(setting.key)") == .environment(setting.environment))

        config = try fixture.load(environment: environment, flags: [setting.flag: setting.values[3]])
        #expect(try setting.read(config) == setting.values[3])
        #expect(config.origin(of: "\(setting.group).\(setting.key)") == .flag(setting.flag))
    }

    @Test("each setting keeps its own origin when the layers set different settings")
    func mixedOrigins() throws {
        let fixture = Fixture()
        fixture.system("[general]\nregion=fr\n[http]\ntimeout=60\n")
        fixture.user("[http]\nhop_timeout=2.5\n")
        let config = try fixture.load(environment: ["CELLPATH_SIM_PREFIX": "xy-"], flags: ["--profile": "lab"])
        #expect(try config.region == "FR")
        #expect(try config.timeout == .seconds(60))
        #expect(try config.hopTimeout == .milliseconds(2500))
        #expect(try config.simPrefix == "xy-")
        #expect(try config.profile == "lab")
        let origins = Dictionary(uniqueKeysWithValues: config.entries.map { ($0.key, $0.origin?.description) })
        #expect(origins["general.region"] == "\(fixture.systemPath) [general] region")
        #expect(origins["http.timeout"] == "\(fixture.systemPath) [http] timeout")
        #expect(origins["http.hop_timeout"] == "\(fixture.userPath) [http] hop_timeout")
        #expect(origins["sim.prefix"] == "environment CELLPATH_SIM_PREFIX")
        #expect(origins["general.profile"] == "flag --profile")
        #expect(origins["truid.data_residency"] == "default")
        #expect(origins["general.region"] != nil)
        let values = Dictionary(uniqueKeysWithValues: config.entries.map { ($0.key, $0.value) })
        #expect(values["general.region"] == "FR")
        #expect(values["http.hop_timeout"] == "2.5")
        #expect(values["truid.client_secret"] == .some(nil))
    }

    @Test("empty environment variables count as unset")
    func emptyEnvironment() throws {
        let fixture = Fixture()
        fixture.user("[general]\nregion=GB\n")
        let config = try fixture.load(environment: ["CELLPATH_REGION": "", "CELLPATH_TIMEOUT": "  "])
        #expect(try config.region == "GB")
        #expect(config.origin(of: "http.timeout") == .builtIn)
    }

    @Test("relative paths in a file are relative to that file; ~/ expands to HOME")
    func relativePaths() throws {
        let fixture = Fixture()
        fixture.user("[http]\ncacert=certs/ca.pem\n")
        var config = try fixture.load()
        #expect(try config.caFile == fixture.directory + "/user/certs/ca.pem")
        config = try fixture.load(environment: ["HOME": "/home/tester", "CELLPATH_CA_FILE": "~/ca.pem"])
        #expect(try config.caFile == "/home/tester/ca.pem")
    }

    @Test("file locations come from CELLPATH_SYSTEM_CONFIG, XDG_CONFIG_HOME and HOME")
    func locations() {
        #expect(ConfigurationLoader.systemPath(environment: [:]) == "/etc/cellpath/cellpath.conf")
        #expect(ConfigurationLoader.systemPath(environment: ["CELLPATH_SYSTEM_CONFIG": "/tmp/s.conf"]) == "/tmp/s.conf")
        #expect(
            ConfigurationLoader.userPath(environment: ["HOME": "/home/a"]) == "/home/a/.config/cellpath/cellpath.conf")
        #expect(
            ConfigurationLoader.userPath(environment: ["HOME": "/home/a", "XDG_CONFIG_HOME": "/cfg"])
                == "/cfg/cellpath/cellpath.conf")
        #expect(
            ConfigurationLoader.userPath(environment: ["HOME": "/home/a", "XDG_CONFIG_HOME": "relative"])
                == "/home/a/.config/cellpath/cellpath.conf")
        #expect(ConfigurationLoader.userPath(environment: [:]) == nil)
        let loader = ConfigurationLoader(environment: ["CELLPATH_SYSTEM_CONFIG": "/x/s.conf", "XDG_CONFIG_HOME": "/y"])
        #expect(loader.systemPath == "/x/s.conf")
        #expect(loader.userPath == "/y/cellpath/cellpath.conf")
    }

    @Test("the environment reaches the loader through CELLPATH_SYSTEM_CONFIG and XDG_CONFIG_HOME")
    func fromEnvironmentPaths() throws {
        let fixture = Fixture()
        fixture.system("[general]\nregion=NL\n")
        mkdir(fixture.directory + "/xdg", 0o700)
        mkdir(fixture.directory + "/xdg/cellpath", 0o700)
        let userFile = fixture.write("xdg/cellpath/cellpath.conf", "[general]\nprofile=production\n")
        let config = try ConfigurationLoader(environment: [
            "CELLPATH_SYSTEM_CONFIG": fixture.systemPath,
            "XDG_CONFIG_HOME": fixture.directory + "/xdg"
        ]).load()
        #expect(try config.region == "NL")
        #expect(try config.profile == "production")
        #expect(config.origin(of: "general.profile") == .file(path: userFile, group: "general", key: "profile"))
    }
}
