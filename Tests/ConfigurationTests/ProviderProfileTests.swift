import CellpathCore
import Configuration
import Testing

/// The providers' profiles (`[twilio]`, `[vonage]`): their keys from files and the environment,
/// secrets masked, the first missing key named, Vonage's private key read as a tru.json is.
@Suite("provider profiles")
struct ProviderProfileTests {
    @Test("a Twilio profile from the user file, the environment winning; its token masked in config show")
    func twilioProfile() throws {
        let fixture = Fixture()
        fixture.user("[twilio]\naccount_sid=ACfile\nauth_token=file-token\nservice_sid=VAfile\n")
        let config = try fixture.load(environment: ["CELLPATH_TWILIO_SERVICE_SID": "VAenv"])
        let profile = try config.requireTwilioProfile()
        #expect(profile.apiBase == "https://verify.twilio.com")
        #expect(profile.accountSID == "ACfile" && profile.authToken == "file-token" && profile.serviceSID == "VAenv")
        #expect(!"\(profile)".contains("file-token"))
        let token = try #require(config.entries.first { $0.key == "twilio.auth_token" })
        #expect(token.isSecret && token.value != "file-token")
    }

    @Test("serve's provider: truid by default, from a file or the environment (lower-cased), an unknown one refused")
    func serveProvider() throws {
        let fixture = Fixture()
        #expect(try fixture.load().servedProvider == "truid")
        fixture.user("[serve]\nprovider=camara\n")
        #expect(try fixture.load().servedProvider == "camara")
        #expect(try fixture.load(environment: ["CELLPATH_SERVE_PROVIDER": "Twilio"]).servedProvider == "twilio")
        let bad = try fixture.load(environment: ["CELLPATH_SERVE_PROVIDER": "sinch"])
        let error = #expect(throws: CellpathError.self) { try bad.servedProvider }
        #expect(error?.kind == .configuration)
        #expect(
            error?.message.contains("expected one of truid, twilio, vonage, camara") == true,
            "\(String(describing: error))")
    }

    @Test("a missing Twilio key is a configuration error naming the key and its variable")
    func twilioMissingKey() throws {
        let fixture = Fixture()
        let config = try fixture.load(environment: ["CELLPATH_TWILIO_ACCOUNT_SID": "AC1"])
        let error = #expect(throws: CellpathError.self) { try config.requireTwilioProfile() }
        #expect(error?.kind == .configuration)
        #expect(error?.message == "no twilio.auth_token configured for --provider twilio")
        #expect(error?.hint?.contains("CELLPATH_TWILIO_AUTH_TOKEN") == true)
    }

    @Test("Vonage takes the application's key file, with a warning when others may read it")
    func vonageApplicationKey() throws {
        let fixture = Fixture()
        let key = fixture.write("vonage.key", "-----BEGIN PRIVATE KEY-----\n", mode: 0o644)
        let config = try fixture.load(environment: [
            "CELLPATH_VONAGE_APPLICATION_ID": "app-1", "CELLPATH_VONAGE_PRIVATE_KEY": key
        ])
        let profile = try config.requireVonageProfile(as: nil)
        guard case .application(let id, let pem) = profile.credentials else {
            Issue.record("expected the application's credentials")
            return
        }
        #expect(id == "app-1" && pem == Array("-----BEGIN PRIVATE KEY-----\n".utf8))
        #expect(profile.brand == "cellpath")
        #expect(profile.warnings == ["\(key) holds a private key but others may read it; run 'chmod 600 \(key)'"])
    }

    @Test("Vonage falls back to the API key and secret; with neither it names what to set")
    func vonageAPIKeyOrNothing() throws {
        let fixture = Fixture()
        let basic = try fixture.load(environment: [
            "CELLPATH_VONAGE_API_KEY": "key-1", "CELLPATH_VONAGE_API_SECRET": "secret-1"
        ]).requireVonageProfile(as: nil)
        guard case .apiKey("key-1", "secret-1") = basic.credentials else {
            Issue.record("expected the API key and secret")
            return
        }
        let none = try fixture.load()
        let error = #expect(throws: CellpathError.self) { try none.requireVonageProfile(as: nil) }
        #expect(error?.message == "no Vonage credentials configured for --provider vonage")
        let missingKey = try fixture.load(environment: ["CELLPATH_VONAGE_APPLICATION_ID": "app-1"])
        let keyError = #expect(throws: CellpathError.self) { try missingKey.requireVonageProfile(as: nil) }
        #expect(keyError?.message == "no vonage.private_key configured for --provider vonage")
    }
}
