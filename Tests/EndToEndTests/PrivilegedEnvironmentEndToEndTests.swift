import Glibc
import SystemSupport
import TestSupport
import Testing

/// Root started through sudo (`SUDO_UID` set) by a user: the environment may not point cellpath
/// at a tree that user could forge, and the files named by options are opened with that user's
/// rights. The built binary, run as root.
@Suite(.serialized, .ownThreads) struct PrivilegedEnvironmentEndToEndTests {
    /// The user sudo was run by, in these tests.
    private static let sudo = ["SUDO_UID": "65534", "SUDO_GID": "65534", "HOME": "/root"]

    /// A new directory under /tmp with `mode`, removed after `body`.
    private func withDirectory(mode: mode_t, _ body: (String) throws -> Void) throws {
        let dir = try TemporaryDirectory.make("cellpath-privileged")
        defer { FileSystem.removeTree(dir) }
        #expect(chmod(dir, mode) == 0)
        try body(dir)
    }

    private func write(_ text: String, to path: String, mode: mode_t = 0o644) {
        let file = fopen(path, "w")!
        fputs(text, file)
        fclose(file)
        chmod(path, mode)
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func underSudoAConfigurationAnyoneCouldWriteIsIgnoredWithAWarning() throws {
        try withDirectory(mode: 0o777) { dir in
            write("[general]\nregion=FR\n", to: "\(dir)/cellpath.conf")
            let environment = ["CELLPATH_SYSTEM_CONFIG": "\(dir)/cellpath.conf"]
            // Run by root itself, the override is followed...
            let plain = try CellpathBinary.run(["config", "show"], environment: environment)
            #expect(plain.status == 0 && plain.stderr == "", "\(plain.stderr)")
            #expect(plain.stdout.contains(#/general\.region +FR /#))
            // ...under sudo it is not: the system file is the real one, and the warning names the variable.
            let sudo = try CellpathBinary.run(["config", "show"], environment: environment.merging(Self.sudo) { $1 })
            #expect(sudo.status == 0)
            #expect(
                sudo.stderr
                    == "warning: ignoring CELLPATH_SYSTEM_CONFIG: as root under sudo, cellpath follows only paths that no user but root can change\n"
            )
            #expect(!sudo.stdout.contains("FR"))
            #expect(sudo.stdout.contains("/etc/cellpath/cellpath.conf"))
        }
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func underSudoAConfigurationOnlyRootCouldWriteIsFollowed() throws {
        try withDirectory(mode: 0o755) { dir in
            write("[general]\nregion=FR\n", to: "\(dir)/cellpath.conf")
            let result = try CellpathBinary.run(
                ["config", "show"],
                environment: ["CELLPATH_SYSTEM_CONFIG": "\(dir)/cellpath.conf"].merging(Self.sudo) { $1 })
            #expect(result.status == 0 && result.stderr == "", "\(result.stderr)")
            #expect(result.stdout.contains(#/general\.region +FR /#))
        }
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func underSudoTheHARIsWrittenWithTheCallersRights() throws {
        try withDirectory(mode: 0o700) { dir in
            let fetch = [
                "fetch", "--interface", "cpnone0", "--dns", "192.0.2.53", "--har", "\(dir)/trace.har",
                "http://api.truid.test/"
            ]
            // The caller may not write in root's directory: refused before any packet.
            let sudo = try CellpathBinary.run(fetch, environment: Self.sudo)
            #expect(sudo.status == 73)
            #expect(sudo.stderr == "error: couldn't write --har \(dir)/trace.har: Permission denied\n")
            // Root itself may (the fetch then fails on the missing interface, after the check).
            let plain = try CellpathBinary.run(fetch)
            #expect(!plain.stderr.contains("--har"), "\(plain.stderr)")
            #expect(access("\(dir)/trace.har", F_OK) != 0)
        }
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func underSudoThePasswordFileIsReadWithTheCallersRights() throws {
        try withDirectory(mode: 0o755) { dir in
            write("secret\n", to: "\(dir)/password", mode: 0o600)
            let bearerUp = ["bearer", "up", "--user", "u", "--password-file", "\(dir)/password"]
            let sudo = try CellpathBinary.run(
                bearerUp, environment: ["CELLPATH_SYSFS_ROOT": "/nonexistent"].merging(Self.sudo) { $1 })
            #expect(sudo.status == 66)
            #expect(sudo.stderr == "error: couldn't read the password file \(dir)/password: Permission denied\n")
            // Root itself reads it, and goes on to look for the modem.
            let plain = try CellpathBinary.run(bearerUp, environment: ["CELLPATH_SYSFS_ROOT": "/nonexistent"])
            #expect(plain.status == 69)
            #expect(plain.stderr.hasPrefix("error: no modem found"), "\(plain.stderr)")
        }
    }

    @Test func aHARPathThatIsASymbolicLinkIsRefusedAndItsTargetLeftAlone() throws {
        try withDirectory(mode: 0o700) { dir in
            #expect(symlink("\(dir)/nologin", "\(dir)/trace.har") == 0)
            let result = try CellpathBinary.run([
                "fetch", "--interface", "cpnone0", "--dns", "192.0.2.53",
                "--har", "\(dir)/trace.har", "http://api.truid.test/"
            ])
            #expect(result.status == 73)
            #expect(
                result.stderr
                    == "error: couldn't write --har \(dir)/trace.har: it is a symbolic link, which cellpath never writes through\n"
            )
            #expect(access("\(dir)/nologin", F_OK) != 0, "the link's target was not created")
        }
    }
}
