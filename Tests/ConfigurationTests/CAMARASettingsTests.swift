import CellpathCore
import Configuration
import Testing

@Suite("the [camara] profile")
struct CAMARASettingsTests {
    static let file = """
        [camara]
        api_root=https://api.operator.test/camara/
        issuer=https://auth.operator.test
        client_id=my-client
        key_file=keys/client.pem

        """

    @Test("a complete profile from the user file: URLs trimmed, the key file relative to it")
    func completeProfile() throws {
        let fixture = Fixture()
        fixture.user(Self.file)
        let camara = try #require(try fixture.load().camara)
        #expect(camara.apiRoot == "https://api.operator.test/camara")
        #expect(camara.issuer == "https://auth.operator.test")
        #expect(camara.clientID == "my-client")
        #expect(camara.keyFile == fixture.directory + "/user/keys/client.pem")
        #expect(camara.keyFileOrigin == .file(path: fixture.userPath, group: "camara", key: "key_file"))
    }

    @Test("the environment overrides the file; none set is no profile, not an error")
    func environmentAndNone() throws {
        let fixture = Fixture()
        #expect(try fixture.load().camara == nil)
        #expect(throws: CellpathError.self) { try fixture.load().requireCAMARA() }
        fixture.user(Self.file)
        let camara = try #require(
            try fixture.load(environment: ["CELLPATH_CAMARA_CLIENT_ID": "env-client"]).camara)
        #expect(camara.clientID == "env-client" && camara.issuer == "https://auth.operator.test")
    }

    @Test("an incomplete profile fails the commands that need it, naming what is missing")
    func incompleteProfile() throws {
        let fixture = Fixture()
        fixture.user("[camara]\nclient_id=my-client\n")
        let error = #expect(throws: CellpathError.self) { try fixture.load().camara }
        #expect(error?.kind == .configuration)
        #expect(error?.message.contains("camara.api_root, camara.issuer, camara.key_file") == true)
        #expect(try fixture.load().region == nil)
    }

    @Test("the key is read only from a file nobody else may read or write")
    func keyFileMode() throws {
        let fixture = Fixture()
        fixture.user(Self.file)
        let key = fixture.write("user/keys-client.pem", "-----BEGIN PRIVATE KEY-----\n", mode: 0o600)
        let environment = ["CELLPATH_CAMARA_KEY_FILE": key]
        #expect(
            try fixture.load(environment: environment).camara?.readKey() == Array("-----BEGIN PRIVATE KEY-----\n".utf8))
        fixture.write(key, "-----BEGIN PRIVATE KEY-----\n", mode: 0o640)
        let error = #expect(throws: CellpathError.self) {
            try fixture.load(environment: environment).camara?.readKey()
        }
        #expect(error?.kind == .configuration)
        #expect(error?.hint?.contains("chmod 600") == true)
        let missing = #expect(throws: CellpathError.self) {
            try fixture.load(environment: ["CELLPATH_CAMARA_KEY_FILE": key + ".gone"]).camara?.readKey()
        }
        #expect(missing?.kind == .configuration)
    }
}
