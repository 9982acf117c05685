import Glibc
import TestSupport
import Testing

/// The system library targets' pkg-config files give SwiftPM no flag it refuses: a `-pthread`
/// (from gio-2.0's private requirement gmodule-no-export-2.0) was a "prohibited flag(s)" warning
/// per target in every build.
@Suite(.ownThreads) struct PkgConfigTests {
    static let environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]

    /// The compiler flags pkg-config gives for the system package `name` (private requirements
    /// included, as SwiftPM reads them).
    static func cflags(_ name: String) throws -> [Substring] {
        let result = try ProcessRunner.run(["pkg-config", "--cflags", name], environment: environment)
        #expect(result.status == 0, "pkg-config \(name): \(result.stderr)")
        return result.stdout.split { $0 == " " || $0 == "\n" }
    }

    /// Every quoted value after `key` in `text` (`pkgConfig: "glib-2.0"` → `glib-2.0`).
    static func quoted(after key: String, in text: String) -> [String] {
        text.split(separator: key).dropFirst().compactMap { rest in
            guard rest.first == "\"" else { return nil }
            return String(rest.dropFirst().prefix { $0 != "\"" })
        }
    }

    @Test func systemPackagesNamedInTheManifestHaveNoPthreadFlag() throws {
        let manifest = try #require(Repository.read("Package.swift"))
        let names = Self.quoted(after: "pkgConfig: ", in: manifest).filter { !$0.contains("/") && !$0.contains("\\(") }
        #expect(names.contains("glib-2.0") && names.contains("libcares"), "\(names)")
        for name in names {
            #expect(try !Self.cflags(name).contains("-pthread"), "\(name) gives -pthread")
        }
    }

    @Test(arguments: ["cellpath-gio.pc", "cellpath-mbim.pc", "cellpath-qmi.pc", "cellpath-mm.pc"])
    func thePackagesOwnFilesRequireNoPthreadAndNameHeadersThatExist(file: String) throws {
        let manifest = try #require(Repository.read("Package.swift"))
        #expect(manifest.contains("pkgConfigFile: \"\(file)\""), "Package.swift does not use \(file)")
        let text = try #require(Repository.read("pkgconfig/" + file))
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        let includeDirectory = lines.first { $0.hasPrefix("includedir=") }.map {
            String($0.dropFirst("includedir=".count))
        }
        for line in lines where line.hasPrefix("Requires:") {
            for name in line.dropFirst("Requires:".count).split(separator: ",").map({ $0.filter { $0 != " " } })
            where !name.hasPrefix("${pcfiledir}") {
                #expect(try !Self.cflags(name).contains("-pthread"), "\(file) requires \(name), which gives -pthread")
            }
        }
        for line in lines where line.hasPrefix("Cflags:") {
            for flag in line.split(separator: " ") where flag.hasPrefix("-I") {
                let directory = flag.dropFirst(2).replacing("${includedir}", with: includeDirectory ?? "")
                #expect(access(String(directory), F_OK) == 0, "\(file): \(directory) does not exist")
            }
        }
    }
}
