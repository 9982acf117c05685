import Glibc
import SystemSupport
import TestSupport
import Testing

/// `cellpath sim-swap` before any request: its options, its number and the `[camara]` profile
/// with its key file (the answers of an operator are `CAMARAEndToEndTests`, in a simulated world).
@Suite(.ownThreads) struct SimSwapEndToEndTests {
    static let noFiles = ["CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf", "HOME": "/nonexistent"]

    @Test(arguments: [["--max-age", "0"], ["--max-age", "2401"], ["--provider", "twilio"]])
    func badOptionsAreUsageErrors(_ options: [String]) throws {
        let result = try CellpathBinary.run(["sim-swap", "+447940448591"] + options, environment: Self.noFiles)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func withoutAProfileItIsAConfigurationError() throws {
        let result = try CellpathBinary.run(["sim-swap", "+447940448591"], environment: Self.noFiles)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("no CAMARA operator configured"))
        #expect(result.stderr.contains("CELLPATH_CAMARA_API_ROOT"))
    }

    /// Vonage's SIM Swap needs the `[vonage]` application (its JWT authenticates the CIBA calls).
    @Test func vonageWithoutAnApplicationIsAConfigurationError() throws {
        var environment = Self.noFiles
        environment["CELLPATH_VONAGE_API_KEY"] = "key"
        environment["CELLPATH_VONAGE_API_SECRET"] = "secret"
        let result = try CellpathBinary.run(
            ["sim-swap", "+447940448591", "--provider", "vonage"], environment: environment)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("--provider vonage needs a Vonage application"), "\(result.stderr)")
    }

    @Test func anInvalidNumberIsADataErrorThatDoesNotRepeatIt() throws {
        let result = try CellpathBinary.run(["sim-swap", "+44 12"], environment: Self.noFiles)
        #expect(result.status == 65, "\(result.stderr)")
    }

    @Test func aKeyOthersMayReadIsRefusedBeforeAnyRequest() throws {
        let directory = try TemporaryDirectory.make("cptest-sim-swap")
        defer { FileSystem.removeTree(directory) }
        let key = directory + "/client.pem"
        let made = try ProcessRunner.run([
            "openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key
        ])
        try #require(made.status == 0, "\(made.stderr)")
        chmod(key, 0o644)
        var environment = Self.noFiles
        // Port 9 (discard) on loopback: nothing may be sent there before the key is accepted.
        environment["CELLPATH_CAMARA_API_ROOT"] = "https://127.0.0.1:9"
        environment["CELLPATH_CAMARA_ISSUER"] = "https://127.0.0.1:9"
        environment["CELLPATH_CAMARA_CLIENT_ID"] = "c"
        environment["CELLPATH_CAMARA_KEY_FILE"] = key
        let exposed = try CellpathBinary.run(["sim-swap", "+447940448591"], environment: environment)
        #expect(exposed.status == 78, "\(exposed.stderr)")
        #expect(exposed.stderr.contains("chmod 600"))
        let garbage = directory + "/garbage.pem"
        let fd = open(garbage, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        close(fd)
        environment["CELLPATH_CAMARA_KEY_FILE"] = garbage
        let unreadable = try CellpathBinary.run(["sim-swap", "+447940448591"], environment: environment)
        #expect(unreadable.status == 78, "\(unreadable.stderr)")
        #expect(unreadable.stderr.contains("not a PEM private key"))
    }
}
