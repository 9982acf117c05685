import Glibc
import SystemSupport
import TestSupport
import Testing

/// The Debian package `make deb` builds, installed on this machine with apt, used, upgraded
/// and purged: what it installs works from the installed files, and nothing is left after.
/// `make test` builds the package first (CELLPATH_DEB); without it, the test builds it.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
struct PackageEndToEndTests {
    static let environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"]

    /// The package's path: CELLPATH_DEB, else built now by `make deb`.
    static func package() throws -> String {
        if let given = getenv("CELLPATH_DEB") { return String(cString: given) }
        let built = try ProcessRunner.run(["make", "-C", Repository.root, "deb"], environment: environment)
        try #require(built.status == 0, "make deb: \(built.stdout)\(built.stderr)")
        let name = try #require(
            FileSystem.entries(Repository.root + "/.build/deb")?.first {
                $0.hasPrefix("cellpath_") && $0.hasSuffix(".deb")
            })
        return Repository.root + "/.build/deb/" + name
    }

    static func run(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(arguments, environment: environment)
    }

    /// Every file the package installs (not its directories), from its own listing.
    static func contents(_ package: String) throws -> [String] {
        try run(["dpkg-deb", "-c", package]).stdout.split(separator: "\n").compactMap { line in
            guard let path = line.split(separator: " ").dropFirst(5).first, !path.hasSuffix("/") else { return nil }
            return String(path.dropFirst())  // ./usr/bin/cellpath → /usr/bin/cellpath
        }
    }

    @Test func installedItWorksFromItsFilesAndPurgedNothingIsLeft() throws {
        let package = try Self.package()
        _ = try Self.run(["apt-get", "purge", "-y", "-q", "cellpath"])
        let installed = try Self.run(["apt-get", "install", "-y", "-q", package])
        #expect(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
        let files = try Self.contents(package)
        for expected in [
            "/usr/bin/cellpath", "/usr/libexec/cellpath/cellpath-modem", "/usr/libexec/cellpath/cellpath-helper",
            "/usr/share/man/man1/cellpath.1.gz", "/usr/share/doc/cellpath/README.md.gz",
            "/usr/lib/systemd/system/cellpath-serve.service", "/usr/lib/systemd/system/cellpath-field@.timer",
            "/usr/share/bash-completion/completions/cellpath", "/usr/share/zsh/vendor-completions/_cellpath",
            "/usr/share/fish/vendor_completions.d/cellpath.fish", "/usr/lib/udev/rules.d/77-cellpath.rules",
            "/etc/cellpath/cellpath.conf"
        ] {
            #expect(files.contains(expected), "\(expected) not in the package")
            #expect(access(expected, F_OK) == 0, "\(expected) not installed")
        }
        #expect(try Self.run(["getent", "group", "cellpath"]).status == 0, "the cellpath group")
        #expect(!(try Self.run(["readelf", "-S", "/usr/bin/cellpath"]).stdout.contains(".debug_info")), "stripped")

        // The installed files at work: the front, a helper, the simulator's main job.
        let version = try Self.run(["/usr/bin/cellpath", "--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("cellpath "), "\(version.stderr)")
        let doctor = try Self.run(["/usr/bin/cellpath", "doctor", "--json"])
        #expect(doctor.stdout.contains(#""checks""#), "doctor: \(doctor.stdout)\(doctor.stderr)")
        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? Self.run(["/usr/bin/cellpath", "sim", "down", "--prefix", prefix]) }
        let up = try Self.run(["/usr/bin/cellpath", "sim", "up", "--prefix", prefix])
        #expect(up.status == 0, "sim up: \(up.stderr)")
        let check = try Self.run([
            "/usr/bin/cellpath", "sim", "exec", "--prefix", prefix, "--", "/usr/bin/cellpath", "subscriber-check",
            "--direct", "--json"
        ])
        #expect(check.status == 0, "the simulator's check: \(check.stdout)\(check.stderr)")
        #expect(try Self.run(["/usr/bin/cellpath", "sim", "down", "--prefix", prefix]).status == 0)

        // The units are valid, and serve's sandbox is tight.
        let verified = try Self.run([
            "systemd-analyze", "verify", "/usr/lib/systemd/system/cellpath-serve.service",
            "/usr/lib/systemd/system/cellpath-field@.timer"
        ])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        let security = try Self.run([
            "systemd-analyze", "security", "--offline=true", "--threshold=20",
            "/usr/lib/systemd/system/cellpath-serve.service"
        ])
        #expect(security.status == 0, "exposure above 2.0: \(security.stdout)\(security.stderr)")

        // An upgrade keeps the administrator's configuration.
        let conf = "/etc/cellpath/cellpath.conf"
        #expect(try Self.run(["sh", "-c", "printf '[general]\\nregion = GB\\n' >> \(conf)"]).status == 0)
        let again = try Self.run(["dpkg", "-i", "--force-confold", package])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(FileSystem.readText(conf)?.contains("region = GB") == true, "the configuration was replaced")

        // Purged: no file, no state, no group.
        let purged = try Self.run(["apt-get", "purge", "-y", "-q", "cellpath"])
        #expect(purged.status == 0, "\(purged.stdout)\(purged.stderr)")
        for file in files { #expect(access(file, F_OK) != 0, "\(file) left behind") }
        for directory in ["/etc/cellpath", "/run/cellpath", "/usr/libexec/cellpath", "/usr/share/doc/cellpath"] {
            #expect(access(directory, F_OK) != 0, "\(directory) left behind")
        }
        #expect(try Self.run(["getent", "group", "cellpath"]).status != 0, "the cellpath group left behind")
    }

    /// The installed size's budget: 40 MB (40,000,000 bytes; dpkg counts KiB).
    @Test func itInstallsInFortyMegabytes() throws {
        let field = try Self.run(["dpkg-deb", "--field", try Self.package(), "Installed-Size"]).stdout
        let kibibytes = try #require(Int(field.filter { !$0.isWhitespace }), "Installed-Size: \(field)")
        #expect(kibibytes * 1024 <= 40_000_000, "Installed-Size \(kibibytes) KiB")
    }

    @Test func lintianFindsNoErrorOrWarning() throws {
        let lintian = try Self.run(["lintian", "--fail-on", "error,warning", try Self.package()])
        #expect(lintian.status == 0, "\(lintian.stdout)\(lintian.stderr)")
    }
}
