import Glibc
import TestSupport
import Testing

/// The front `cellpath` and the executables it hands commands to (docs/architecture.md,
/// Executables): what the front loads, and where it finds the others.
@Suite(.ownThreads) struct ExecutablesEndToEndTests {
    @Test func theFrontLoadsNoServerPhoneNumberOrModemLibrary() throws {
        let libraries = try ProcessRunner.run(["ldd", CellpathBinary.path]).stdout
        #expect(libraries.contains("libcares"))
        for name in ["libmicrohttpd", "libphonenumber", "libprotobuf", "libicu", "libabsl", "libmbim", "libqmi"] {
            #expect(!libraries.contains(name), "\(name) is on the start-up path of every command")
        }
    }

    /// libcurl and its dependency closure (TLS, Kerberos, LDAP, SSH, …) load when a command first
    /// makes an HTTP request, not at start-up: `bearer up` runs in the front and `cellpath-modem`.
    @Test(arguments: ["", "-modem", "-helper"])
    func noExecutableLoadsLibcurlAtStartUp(suffix: String) throws {
        let libraries = try ProcessRunner.run(["ldd", CellpathBinary.path + suffix]).stdout
        #expect(libraries.contains("libc.so"), "ldd failed: \(libraries)")
        for name in ["libcurl", "libssl", "libldap", "libgssapi", "libssh2", "librtmp"] {
            #expect(!libraries.contains(name), "cellpath\(suffix) loads \(name) at start-up")
        }
    }

    /// A fetch loads libcurl when it parses its URL (curl's URL API): it gets past parsing to the
    /// destination check; where libcurl cannot be loaded, the fetch is an internal error (exit 70)
    /// that says why, and a command without a request (`--version`) does not notice.
    @Test func aFetchLoadsLibcurlOnFirstUseAndSaysWhyWhenItCannot() throws {
        let fetch = ["fetch", "--interface", "lo", "--dns", "127.0.0.1", "--allow-any-interface", "http://127.0.0.1:9/"]
        let loaded = try CellpathBinary.run(fetch + ["--json"])
        #expect(loaded.stdout.contains(#""reason": "localDestination""#), "\(loaded.stdout)\(loaded.stderr)")
        try withDirectory("broken-libcurl") { root in
            try shell(": > \(root)/libcurl.so.4")
            let broken = try CellpathBinary.run(fetch, environment: ["LD_LIBRARY_PATH": root])
            #expect(broken.status == 70)
            #expect(broken.stderr.contains("error: couldn't load libcurl: \(root)/libcurl.so.4"), "\(broken.stderr)")
            let version = try CellpathBinary.run(["--version"], environment: ["LD_LIBRARY_PATH": root])
            #expect(version.status == 0 && version.stdout.hasPrefix("cellpath "), "\(version.stderr)")
        }
    }

    /// A command handed over on its words before the front parses it gets its usage error from
    /// the program that runs it, with the same exit code.
    @Test func aHandedOverCommandsUsageErrorIsTheSame() throws {
        let result = try CellpathBinary.run(["sim", "bearer", "connect", "--modem", "64"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("invalid value '64' for '--modem'"), "\(result.stderr)")
    }

    @Test func installedTheFrontFindsTheOthersInLibexec() throws {
        try withDirectory("installed") { root in
            try shell(
                "mkdir -p \(root)/bin \(root)/libexec/cellpath && cp \(CellpathBinary.path) \(root)/bin/ && "
                    + "ln -s \(CellpathBinary.path)-helper \(root)/libexec/cellpath/")
            let result = try ProcessRunner.run(["\(root)/bin/cellpath", "number", "+447940448591", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains(#""e164": "+447940448591""#))
        }
    }

    @Test func aMissingExecutableIsAnInternalErrorAndHelpStillWorks() throws {
        try withDirectory("alone") { root in
            try shell("cp \(CellpathBinary.path) \(root)/")
            let result = try ProcessRunner.run(["\(root)/cellpath", "number", "+447940448591"])
            #expect(result.status == 70)
            #expect(result.stdout == "")
            #expect(
                result.stderr == """
                    error: cellpath-helper is missing (looked for \(root)/cellpath-helper and \(root)/../libexec/cellpath/cellpath-helper)
                    hint: build every executable (swift build, make build) or reinstall (make install)

                    """)
            // Handed over on its words, then parsed by the front when the program is missing.
            let misused = try ProcessRunner.run(["\(root)/cellpath", "number", "--bogus"])
            #expect(misused.status == 64)
            #expect(misused.stderr.contains("unknown option '--bogus'"), "\(misused.stderr)")
            let help = try ProcessRunner.run(["\(root)/cellpath", "help", "number"])
            #expect(help.status == 0)
            #expect(help.stdout == (try CellpathBinary.run(["number", "--help"])).stdout)
        }
    }

    /// Runs `body` with a new empty directory, removed afterwards.
    private func withDirectory(_ name: String, _ body: (String) throws -> Void) throws {
        let root = "/tmp/cellpath-executables-\(getpid())-\(name)"
        try shell("rm -rf \(root) && mkdir \(root)")
        defer { _ = try? shell("rm -rf \(root)") }
        try body(root)
    }

    private func shell(_ script: String) throws {
        let result = try ProcessRunner.run(["sh", "-c", script])
        #expect(result.status == 0, "\(script): \(result.stderr)")
    }
}
