import CellpathCore
import Glibc
import SystemSupport
import TestSupport
import Testing

/// Root started through sudo by another user follows `CELLPATH_SYSFS_ROOT` and
/// `CELLPATH_DEV_ROOT` only into a tree that user cannot change: a copied sysfs in a directory
/// anyone may write is a forgery of which modem drives which interface.
@Suite(.serialized, .timeLimit(.minutes(3)), .ownThreads)
struct PrivilegedOverridesTests {
    /// A directory of everyone's (0755) in /tmp holding copies of `cellpath` and
    /// `cellpath-modem`, to be made capable, set-user-ID or a group's by the test.
    static func copyOfTheExecutables(_ purpose: String) throws -> String {
        let copy = try TemporaryDirectory.make("cellpath-\(purpose)")
        #expect(chmod(copy, 0o755) == 0)
        let built = String(CellpathBinary.path.dropLast("/cellpath".count))
        let install = try ProcessRunner.run(["cp", "\(built)/cellpath", "\(built)/cellpath-modem", copy])
        #expect(install.status == 0, "\(install.stderr)")
        return copy
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func underSudoAModemTreeAnyoneCouldWriteIsIgnoredWithAWarning() throws {
        let fleet = try SimulatedFleet([.test(.mbim, 1)])
        let environment = fleet.environment.merging(["SUDO_UID": "65534", "SUDO_GID": "65534"]) { $1 }
        // Root's own tree (its directory, in sticky /tmp) is followed: the simulated modem is listed.
        let trusted = try CellpathBinary.run(["modems", "--json", "--no-proxy"], environment: environment)
        #expect(trusted.status == 0 && trusted.stderr == "", "\(trusted.stderr)")
        #expect(try JSONValue.parse(trusted.stdout)["modems"]?.array?.count == 1)
        // Opened to everyone, the same tree could be anyone's forgery: ignored, and said so.
        #expect(chmod(fleet.runDirectory, 0o777) == 0)
        let forged = try CellpathBinary.run(["modems", "--json", "--no-proxy"], environment: environment)
        let warning =
            "ignoring CELLPATH_DEV_ROOT, CELLPATH_SYSFS_ROOT: as root under sudo, cellpath follows only paths that no user but root can change"
        #expect(forged.stderr == "warning: \(warning)\n")
        let json = try JSONValue.parse(forged.stdout)
        #expect(
            json["modems"]?.array?.contains { $0["device"]?.string?.hasPrefix(fleet.runDirectory) == true } == false)
        #expect(json["warnings"]?.array?.compactMap(\.string) == [warning])
    }

    /// The set-up where the overrides would be unsafe: `cellpath-modem` with `cap_net_admin+ep`, run by
    /// nobody with the overrides pointing at a modem tree. Every one is ignored.
    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func withFileCapabilitiesEveryPathOverrideIsIgnoredWithAWarning() throws {
        let fleet = try SimulatedFleet([.test(.mbim, 1)])
        #expect(chmod(fleet.runDirectory, 0o755) == 0)
        let copy = try Self.copyOfTheExecutables("capable")
        defer { FileSystem.removeTree(copy) }
        let setcap = try ProcessRunner.run(["setcap", "cap_net_admin+ep", "\(copy)/cellpath-modem"])
        try #require(setcap.status == 0, "\(setcap.stderr)")
        // A HOME that is not the caller's own (nobody's is /nonexistent) is an override too.
        let variables = fleet.environment.merging([
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/tmp",
            "CELLPATH_STATE_DIR": "\(fleet.runDirectory)/state",
            "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
        ]) { $1 }
        let result = try ProcessRunner.run(
            ["runuser", "-u", "nobody", "--", "env", "-i"] + variables.map { "\($0)=\($1)" }
                + ["\(copy)/cellpath", "modems", "--json", "--no-proxy"])
        #expect(
            result.stderr == """
                warning: ignoring CELLPATH_DEV_ROOT, CELLPATH_STATE_DIR, CELLPATH_SYSFS_ROOT, CELLPATH_SYSTEM_CONFIG, HOME: \
                cellpath runs with privileges its caller does not have (file capabilities or set-user-ID), \
                and takes no paths or credentials from the caller's environment

                """)
        let json = try JSONValue.parse(result.stdout)
        #expect(
            json["modems"]?.array?.contains { $0["device"]?.string?.hasPrefix(fleet.runDirectory) == true } == false)
    }

    /// The capable `cellpath-modem` is its group's only (mode 0750): anyone else is told so by
    /// the front, which cannot hand the command over.
    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func aModemExecutableOfAnotherGroupIsAPermissionError() throws {
        let copy = try Self.copyOfTheExecutables("group")
        defer { FileSystem.removeTree(copy) }
        #expect(chmod("\(copy)/cellpath-modem", 0o750) == 0)
        let result = try ProcessRunner.run([
            "runuser", "-u", "nobody", "--", "env", "-i", "PATH=/usr/bin:/bin", "HOME=/nonexistent",
            "\(copy)/cellpath", "modems"
        ])
        #expect(result.status == 77)
        #expect(
            result.stderr == """
                error: \(copy)/cellpath-modem may not be run by this user
                hint: run it with sudo, or join the group that may run it (docs/operations.md, Privileges)

                """)
    }

    /// A set-user-ID root `cellpath-modem` run by nobody opens the files its options name with
    /// nobody's rights: it neither reads root's secrets nor writes where nobody may not.
    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func setUserIDRootOpensTheOptionsFilesAsItsCaller() throws {
        let copy = try Self.copyOfTheExecutables("setuid")
        defer { FileSystem.removeTree(copy) }
        #expect(chmod("\(copy)/cellpath-modem", 0o4755) == 0)
        #expect(mkdir("\(copy)/root", 0o755) == 0 && mkdir("\(copy)/root/private", 0o700) == 0)
        let secret = fopen("\(copy)/root/private/password", "w")!
        fputs("secret\n", secret)
        fclose(secret)
        func asNobody(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run(
                [
                    "runuser", "-u", "nobody", "--", "env", "-i", "PATH=/usr/bin:/bin", "HOME=/nonexistent",
                    "\(copy)/cellpath"
                ] + arguments)
        }
        let bearer = try asNobody(["bearer", "up", "--user", "u", "--password-file", "\(copy)/root/private/password"])
        #expect(bearer.status == 66)
        // HOME is nobody's own (/nonexistent): dropped, but no override to warn about.
        #expect(
            bearer.stderr == "error: couldn't read the password file \(copy)/root/private/password: Permission denied\n"
        )
        let fetch = try asNobody(["fetch", "-m", "0", "--har", "\(copy)/root/trace.har", "http://api.truid.test/"])
        #expect(fetch.status == 73)
        #expect(fetch.stderr == "error: couldn't write --har \(copy)/root/trace.har: Permission denied\n")
        #expect(access("\(copy)/root/trace.har", F_OK) != 0)
    }
}
