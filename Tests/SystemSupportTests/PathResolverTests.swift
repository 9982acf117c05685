import Glibc
import SystemSupport
import TestSupport
import Testing

/// `PathResolver` answers as `realpath(3)` does, on a tree shaped like sysfs (relative and
/// absolute links, links to links, `..` after a link), and reads each link once.
@Suite struct PathResolverTests {
    /// A tree with `class/net/wwan0 -> ../../devices/usb1/1-1/1-1:1.0/net/wwan0`, a `subsystem`
    /// link, an absolute link, a chain of two links, a loop and a dangling link.
    private func makeTree() throws -> String {
        let root = try TemporaryDirectory.make("cellpath-paths")
        let device = "\(root)/devices/usb1/1-1/1-1:1.0"
        try FileSystem.makeDirectories("\(device)/net/wwan0")
        try FileSystem.makeDirectories("\(root)/class/net")
        try FileSystem.makeDirectories("\(root)/bus/usb")
        try FileSystem.write("2c7c\n", to: "\(root)/devices/usb1/1-1/idVendor")
        #expect(symlink("../../devices/usb1/1-1/1-1:1.0/net/wwan0", "\(root)/class/net/wwan0") == 0)
        #expect(symlink("../../../bus/usb", "\(root)/devices/usb1/1-1/subsystem") == 0)
        #expect(symlink("\(root)/devices/usb1", "\(root)/absolute") == 0)
        #expect(symlink("absolute", "\(root)/chain") == 0)
        #expect(symlink("loop-b", "\(root)/loop-a") == 0)
        #expect(symlink("loop-a", "\(root)/loop-b") == 0)
        #expect(symlink("missing", "\(root)/dangling") == 0)
        return root
    }

    @Test func answersAsRealpathDoes() throws {
        let root = try makeTree()
        defer { FileSystem.removeTree(root) }
        let resolver = PathResolver()
        let paths = [
            root, "\(root)/", "\(root)/class/net/wwan0", "\(root)/class/net/wwan0/", "\(root)/class/net/wwan0/..",
            "\(root)/class/net/wwan0/../..", "\(root)/devices/usb1/1-1/subsystem",
            "\(root)/devices/usb1/1-1/1-1:1.0/../subsystem", "\(root)/absolute/1-1/idVendor",
            "\(root)/chain/1-1", "\(root)/chain/../class", "\(root)/./class//net/./wwan0",
            "\(root)/devices/usb1/1-1/idVendor/x", "\(root)/missing", "\(root)/missing/x", "\(root)/dangling",
            "\(root)/loop-a", "/", "/..", "\(root)/../../../../../.."
        ]
        for path in paths {
            #expect(resolver.realPath(path) == FileSystem.realPath(path), "\(path)")
        }
        // Asked again, from what it kept: the same answers.
        for path in paths {
            #expect(resolver.realPath(path) == FileSystem.realPath(path), "\(path), again")
        }
        let device = "\(FileSystem.realPath(root) ?? "")/devices/usb1/1-1/1-1:1.0"
        #expect(resolver.realPath("\(root)/class/net/wwan0") == "\(device)/net/wwan0")
        #expect(resolver.realPath("\(root)/loop-a") == nil)
    }

    /// The machine's own sysfs: its class entries and the links discovery follows from them.
    @Test func answersAsRealpathDoesOnThisMachinesSysfs() {
        let resolver = PathResolver()
        var asked = 0
        for directory in ["/sys/class/net", "/sys/class/tty", "/sys/class/usbmisc", "/sys/class/wwan"] {
            for name in (FileSystem.entries(directory) ?? []).sorted().prefix(40) {
                for suffix in ["", "/device", "/device/driver", "/device/subsystem", "/subsystem", "/device/.."] {
                    let path = "\(directory)/\(name)\(suffix)"
                    #expect(resolver.realPath(path) == FileSystem.realPath(path), "\(path)")
                    asked += 1
                }
            }
        }
        #expect(asked > 0, "this machine has no /sys/class/net")
    }

    @Test func aLinkIsReadOnceForEveryPathThroughIt() throws {
        let root = try makeTree()
        defer { FileSystem.removeTree(root) }
        let resolver = PathResolver()
        #expect(resolver.realPath("\(root)/chain/1-1/idVendor") != nil)
        // The kept answer stands even after the link changes: one pass sees one tree.
        #expect(unlink("\(root)/chain") == 0)
        #expect(symlink("missing", "\(root)/chain") == 0)
        #expect(resolver.realPath("\(root)/chain/1-1/1-1:1.0") != nil)
        #expect(PathResolver().realPath("\(root)/chain/1-1/1-1:1.0") == nil)
    }
}
