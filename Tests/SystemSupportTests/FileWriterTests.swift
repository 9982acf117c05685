import CellpathCore
import Glibc
import SystemSupport
import TestSupport
import Testing

/// The one way cellpath writes a file (`FileSystem.write`): what it refuses, what it never
/// follows, and what it leaves behind. The cases about other users need root (chown, another
/// filesystem identity).
@Suite(.serialized, .ownThreads) struct FileWriterTests {
    private static let nobody = FileIdentity(uid: 65534, gid: 65534)

    private func text(_ path: String) -> String? { FileSystem.readText(path) }

    private func entries(_ directory: String) -> [String] { (FileSystem.entries(directory) ?? []).sorted() }

    private func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    @Test func aSymbolicLinkAtThePathIsNeitherFollowedNorReplaced() throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        try FileSystem.write("victim\n", to: "\(dir)/victim")
        #expect(symlink("\(dir)/victim", "\(dir)/record.json") == 0)
        let error = #expect(throws: SystemError.self) { try FileSystem.write("record\n", to: "\(dir)/record.json") }
        #expect(error?.code == ELOOP)
        #expect(
            error?.description == "write \(dir)/record.json: it is a symbolic link, which cellpath never writes through"
        )
        #expect(text("\(dir)/victim") == "victim\n")
        #expect(isSymbolicLink("\(dir)/record.json"))
        #expect(throws: SystemError.self) { try FileSystem.checkWritable("\(dir)/record.json") }
        #expect(entries(dir) == ["record.json", "victim"], "no temporary file is left behind")
    }

    @Test func aDanglingSymbolicLinkCreatesNothingAtItsTarget() throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        #expect(symlink("\(dir)/nologin", "\(dir)/out.har") == 0)
        #expect(throws: SystemError.self) { try FileSystem.checkWritable("\(dir)/out.har") }
        #expect(throws: SystemError.self) { try FileSystem.write("trace", to: "\(dir)/out.har") }
        #expect(!FileSystem.exists("\(dir)/nologin"))
        #expect(entries(dir) == ["out.har"])
    }

    @Test func checkingAPathCreatesNothingThere() throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        try FileSystem.checkWritable("\(dir)/metrics.prom")
        #expect(entries(dir).isEmpty)
        #expect(throws: SystemError.self) { try FileSystem.checkWritable("\(dir)/missing/metrics.prom") }
        let directory = #expect(throws: SystemError.self) { try FileSystem.checkWritable(dir) }
        #expect(directory?.code == EISDIR)
    }

    @Test func linksPlantedAtPredictableTemporaryNamesAreNotFollowed() throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        try FileSystem.write("victim\n", to: "\(dir)/victim")
        // The names earlier writers used: `<path>.tmp<pid>` and `<path>.tmp.<pid>`.
        for name in ["record.json.tmp\(getpid())", "record.json.tmp.\(getpid())"] {
            #expect(symlink("\(dir)/victim", "\(dir)/\(name)") == 0)
        }
        try FileSystem.write("record\n", to: "\(dir)/record.json", mode: 0o600)
        #expect(text("\(dir)/victim") == "victim\n")
        #expect(text("\(dir)/record.json") == "record\n")
        #expect(!isSymbolicLink("\(dir)/record.json"))
    }

    /// Both durabilities: runtime state written unsynced is replaced the same way.
    private static let durabilities: [FileSystem.Durability] = [.synced, .untilReboot]

    @Test(arguments: durabilities)
    func theFileGetsExactlyTheModeGivenWhateverTheUmask(_ durability: FileSystem.Durability) throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        let previous = umask(0o077)
        defer { umask(previous) }
        try FileSystem.write(Array("metrics\n".utf8), to: "\(dir)/cellpath.prom", mode: 0o644, durability: durability)
        var info = stat()
        #expect(stat("\(dir)/cellpath.prom", &info) == 0 && info.st_mode & 0o7777 == 0o644)
        try FileSystem.write(Array("secret\n".utf8), to: "\(dir)/cellpath.prom", mode: 0o600, durability: durability)
        #expect(stat("\(dir)/cellpath.prom", &info) == 0 && info.st_mode & 0o7777 == 0o600)
    }

    @Test(arguments: durabilities)
    func theOldFileIsReplacedWholeNotRewritten(_ durability: FileSystem.Durability) throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        try FileSystem.write("old\n", to: "\(dir)/record.json")
        // A hard link and an open descriptor keep seeing the old file: the new one is another inode.
        #expect(link("\(dir)/record.json", "\(dir)/old-copy") == 0)
        let reader = try FileDescriptor.open("\(dir)/record.json", O_RDONLY)
        try FileSystem.write(Array("new\n".utf8), to: "\(dir)/record.json", durability: durability)
        #expect(text("\(dir)/record.json") == "new\n")
        #expect(text("\(dir)/old-copy") == "old\n")
        #expect(String(decoding: try IO.readAll(reader.rawValue), as: UTF8.self) == "old\n")
        #expect(entries(dir) == ["old-copy", "record.json"])
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func rootRefusesADirectoryOtherUsersMayWrite() throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        #expect(chmod(dir, 0o755) == 0)
        try FileSystem.makeDirectories("\(dir)/shared/below")
        #expect(chmod("\(dir)/shared", 0o777) == 0)
        let error = #expect(throws: SystemError.self) {
            try FileSystem.write("record", to: "\(dir)/shared/record.json")
        }
        #expect(error?.code == EPERM)
        #expect(error?.reason == "its directory may be written by a user other than root, and the file is not root's")
        #expect(throws: SystemError.self) { try FileSystem.checkWritable("\(dir)/shared/record.json") }
        // Below it too: the other user could swap `below` for a link to anywhere.
        let above = #expect(throws: SystemError.self) {
            try FileSystem.write("record", to: "\(dir)/shared/below/record.json")
        }
        #expect(above?.reason == "its directory, or one above it, may be changed by a user other than root")
        // A directory of another user is theirs to change as well.
        #expect(chown("\(dir)/shared/below", Self.nobody.uid, Self.nobody.gid) == 0)
        #expect(chmod("\(dir)/shared", 0o755) == 0)
        #expect(throws: SystemError.self) { try FileSystem.write("record", to: "\(dir)/shared/below/record.json") }
        #expect(entries("\(dir)/shared").sorted() == ["below"])
        #expect(entries("\(dir)/shared/below").isEmpty)
        // That user writes there as themselves, and owns what they write.
        try FileSystem.write("theirs", to: "\(dir)/shared/below/theirs.json", as: Self.nobody)
        var info = stat()
        #expect(stat("\(dir)/shared/below/theirs.json", &info) == 0 && info.st_uid == Self.nobody.uid)
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func inAStickyDirectoryRootWritesOnlyItsOwnFiles() throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        #expect(chmod(dir, 0o755) == 0)
        try FileSystem.makeDirectories("\(dir)/sticky")
        #expect(chmod("\(dir)/sticky", 0o1777) == 0)
        try FileSystem.write("root's", to: "\(dir)/sticky/root.json")
        try FileSystem.write("root's again", to: "\(dir)/sticky/root.json")
        #expect(text("\(dir)/sticky/root.json") == "root's again")
        try FileSystem.write("theirs", to: "\(dir)/sticky/theirs.json", as: Self.nobody)
        let error = #expect(throws: SystemError.self) {
            try FileSystem.write("root's", to: "\(dir)/sticky/theirs.json")
        }
        #expect(error?.code == EPERM)
        #expect(text("\(dir)/sticky/theirs.json") == "theirs")
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func filesAreOpenedWithTheIdentityGiven() throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        try FileSystem.write("root only\n", to: "\(dir)/secret", mode: 0o600)
        let read = #expect(throws: SystemError.self) { try FileSystem.read("\(dir)/secret", as: Self.nobody) }
        #expect(read?.code == EACCES)
        let write = #expect(throws: SystemError.self) {
            try FileSystem.write("x", to: "\(dir)/secret", as: Self.nobody)
        }
        #expect(write?.code == EACCES)
        #expect(text("\(dir)/secret") == "root only\n")
        // The identity is this thread's only for the call: root reads it again afterwards.
        #expect(try FileSystem.read("\(dir)/secret") == Array("root only\n".utf8))
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func onlyRootCanChangeAPathWhoseEveryPartIsRoots() throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        #expect(FileSystem.onlyRootCanChange("/run"))
        #expect(FileSystem.onlyRootCanChange("\(dir)"), "root's directory in sticky /tmp")
        #expect(FileSystem.onlyRootCanChange("\(dir)/not-yet"))
        #expect(!FileSystem.onlyRootCanChange("/tmp"), "anyone may create what is below it")
        #expect(!FileSystem.onlyRootCanChange("/tmp/cellpath-not-yet-\(getpid())"))
        try FileSystem.makeDirectories("\(dir)/open/root")
        #expect(chmod("\(dir)/open", 0o777) == 0)
        #expect(!FileSystem.onlyRootCanChange("\(dir)/open"))
        #expect(!FileSystem.onlyRootCanChange("\(dir)/open/root"), "its parent may be replaced")
        #expect(!FileSystem.onlyRootCanChange("\(dir)/open/missing"))
        try FileSystem.makeDirectories("\(dir)/theirs")
        #expect(chown("\(dir)/theirs", Self.nobody.uid, Self.nobody.gid) == 0)
        #expect(!FileSystem.onlyRootCanChange("\(dir)/theirs"))
        // A link is judged by where it leads.
        #expect(symlink("\(dir)/open/root", "\(dir)/link") == 0)
        #expect(!FileSystem.onlyRootCanChange("\(dir)/link/sys"))
        #expect(symlink("/run", "\(dir)/run-link") == 0)
        #expect(FileSystem.onlyRootCanChange("\(dir)/run-link"))
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func rootUnderSudoKeepsOnlyOverridesOfRootsOwnTrees() throws {
        let dir = try TemporaryDirectory.make("cellpath-writer")
        defer { FileSystem.removeTree(dir) }
        try FileSystem.makeDirectories("\(dir)/open")
        #expect(chmod("\(dir)/open", 0o777) == 0)
        let privilege = ProcessPrivilege.current(environment: ["SUDO_UID": "1000", "SUDO_GID": "1001"])
        #expect(privilege == .rootUnderSudo(caller: FileIdentity(uid: 1000, gid: 1001)))
        #expect(ProcessPrivilege.current(environment: ["SUDO_UID": "0"]) == .ordinary)
        #expect(ProcessPrivilege.current(environment: [:]) == .ordinary)
        let environment = [
            "CELLPATH_SYSFS_ROOT": "\(dir)/open/sys", "CELLPATH_DEV_ROOT": "\(dir)/dev",
            "CELLPATH_STATE_DIR": "relative/state", "HOME": "/root",
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(dir)/open/bus", "CELLPATH_CLIENT_ID": "id", "PATH": "/bin"
        ]
        let (kept, ignored) = privilege.screen(environment)
        #expect(ignored == ["CELLPATH_STATE_DIR", "CELLPATH_SYSFS_ROOT", "DBUS_SYSTEM_BUS_ADDRESS"])
        #expect(
            kept == ["CELLPATH_DEV_ROOT": "\(dir)/dev", "HOME": "/root", "CELLPATH_CLIENT_ID": "id", "PATH": "/bin"])
        let raised = ProcessPrivilege.raisedByExecutable(caller: Self.nobody).screen(environment)
        #expect(raised.environment == ["PATH": "/bin"])
        #expect(raised.ignored.count == 6)
        #expect(ProcessPrivilege.ordinary.screen(environment).environment == environment)
    }
}
