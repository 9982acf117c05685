import Glibc
import SystemSupport
import TestSupport
import Testing

/// The usage docs and the man page are generated from `--help`: they must not go stale.
@Suite(.ownThreads) struct DocumentationTests {
    @Test(arguments: [("markdown", "docs/usage.md"), ("man", "docs/cellpath.1")])
    func generatedDocsAreCurrent(format: String, path: String) throws {
        let generated = try CellpathBinary.run(["generate-docs", "--format", format])
        #expect(generated.status == 0)
        #expect(Repository.read(path) == generated.stdout, "\(path) is stale: run `make docs`")
    }

    @Test func readmeListsEveryExitCode() throws {
        let readme = try #require(Repository.read("README.md"))
        let codes = try Self.exitCodes()
        #expect(codes.count >= 10)
        for number in codes {
            #expect(readme.contains("| \(number) |"), "README lacks exit code \(number)")
        }
    }

    // MARK: The man page

    /// docs/cellpath.1 as `man` shows it 80 columns wide (man-db, from `make deps`).
    private static func renderedManPage() throws -> [Substring] {
        let result = try ProcessRunner.run(
            ["man", "-l", Repository.root + "/docs/cellpath.1"],
            environment: [
                "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "MANWIDTH": "80",
                "MANPAGER": "cat", "PAGER": "cat"
            ])
        #expect(result.status == 0)
        #expect(result.stderr == "", "man or groff complained")
        return result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    }

    /// The rendered page's sections: heading → lines (the header and footer left out).
    private static func sections(_ lines: [Substring]) -> [(name: String, lines: [Substring])] {
        var sections: [(name: String, lines: [Substring])] = []
        for line in lines.dropFirst().dropLast(2) {
            if let first = line.first, first != " " {
                sections.append((String(line), []))
            } else if !sections.isEmpty {
                sections[sections.count - 1].lines.append(line)
            }
        }
        return sections
    }

    @Test func manPageHasTheSectionsOfAManPageAndFits80Columns() throws {
        let lines = try Self.renderedManPage()
        let long = lines.filter { $0.count > 80 }
        #expect(long.isEmpty, "lines wider than 80 columns:\n\(long.joined(separator: "\n"))")
        #expect(
            Self.sections(lines).map(\.name)
                == [
                    "NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES",
                    "SEE ALSO"
                ])
    }

    @Test func manPageDescribesEveryCommandAndItsOptions() throws {
        let sections = Self.sections(try Self.renderedManPage())
        let synopsis = try #require(sections.first { $0.name == "SYNOPSIS" }).lines.map { $0.trimmingSpaces }
        let description = try #require(sections.first { $0.name == "DESCRIPTION" }).lines
        let options = try #require(sections.first { $0.name == "OPTIONS" }).lines
        // docs/usage.md holds every command's --help (generatedDocsAreCurrent keeps it so).
        let usage = try #require(Repository.read("docs/usage.md")).split(
            separator: "\n", omittingEmptySubsequences: false)
        let commands = usage.indices.filter { usage[$0].hasPrefix("## `cellpath ") }
            .map {
                (
                    name: String(usage[$0].dropFirst(4).dropLast()),
                    help: usage[($0 + 1)...].prefix { !$0.hasPrefix("## ") }
                )
            }
        #expect(commands.count >= 10)
        for (command, help) in commands {
            #expect(description.contains("   \(command)"[...]), "DESCRIPTION has no subsection for \(command)")
            #expect(synopsis.contains { $0 == command || $0.hasPrefix(command + " ") }, "SYNOPSIS lacks \(command)")
            // Every option of the command's own help, listed under its subsection of OPTIONS.
            // An option's line starts with it (`-m, --modem`, `--json`); its description's lines do not.
            let own = help.drop { $0 != "OPTIONS:" }.dropFirst().prefix { !$0.isEmpty }
                .filter { $0.trimmingSpaces.hasPrefix("-") }
                .compactMap { $0.split(separator: " ").first { $0.hasPrefix("--") } }
                .filter { $0 != "--help" }
            guard !own.isEmpty else { continue }
            let start = try #require(
                options.firstIndex(of: "   \(command)"[...]), "OPTIONS has no subsection for \(command)")
            let subsection = options[options.index(after: start)...].prefix {
                !$0.hasPrefix("   ") || $0.hasPrefix("    ")
            }
            for option in own {
                #expect(
                    subsection.contains { $0.trimmingSpaces.hasPrefix(String(option)) || $0.contains(", \(option)") },
                    "OPTIONS of \(command) lacks \(option)")
            }
        }
    }

    @Test func manPageExitStatusListsEveryExitCode() throws {
        let sections = Self.sections(try Self.renderedManPage())
        let exitStatus = try #require(sections.first { $0.name == "EXIT STATUS" }).lines
        let listed = exitStatus.compactMap { line -> String? in
            let word = line.trimmingSpaces.split(separator: " ").first.map(String.init) ?? ""
            return line.hasPrefix("       ") && !line.hasPrefix("        ") && word.allSatisfy(\.isNumber)
                && !word.isEmpty
                ? word : nil
        }
        #expect(listed == (try Self.exitCodes()))
    }

    /// The exit codes of `cellpath --help` (from ExitCode.swift), in order.
    private static func exitCodes() throws -> [String] {
        let help = try CellpathBinary.run(["--help"]).stdout
        return help.split(separator: "\n").drop { $0 != "EXIT CODES:" }.dropFirst().prefix { $0.hasPrefix("  ") }
            .map { $0.split(separator: " ").first.map(String.init) ?? "" }
    }

    // MARK: Links and document names

    /// README.md and every docs/*.md, by path from the repository root.
    private static func markdownDocuments() throws -> [(path: String, text: String)] {
        let names = try #require(FileSystem.entries(Repository.root + "/docs"))
        let paths = ["README.md"] + names.filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        return try paths.sorted().map { path in (path, try #require(Repository.read(path))) }
    }

    /// Whether `path` (from the repository root) exists.
    private static func exists(_ path: String) -> Bool {
        access(Repository.root + "/" + path, F_OK) == 0
    }

    /// `target` of a link or a mention in the document at `documentPath`, from the repository root.
    private static func resolve(_ target: String, from documentPath: String) -> String {
        let directory = documentPath.contains("/") ? String(documentPath[..<documentPath.lastIndex(of: "/")!]) : ""
        if target.hasPrefix("docs/") || directory.isEmpty { return target }
        return directory + "/" + target
    }

    /// GitHub's anchor for a heading: lower case, spaces as '-', other punctuation dropped.
    private static func anchor(_ heading: Substring) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_"
                    ? character : nil
            })
    }

    private static func anchors(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").filter { $0.hasPrefix("#") }.map { anchor($0.drop { $0 == "#" }.dropFirst()) })
    }

    @Test func everyLinkInTheDocsLeadsToAShippedFileAndHeading() throws {
        let documents = try Self.markdownDocuments()
        var checked = 0
        for (path, text) in documents {
            var rest = Substring(text)
            while let open = rest.firstRange(of: "](") {
                rest = rest[open.upperBound...]
                guard let close = rest.firstIndex(of: ")") else { break }
                let link = String(rest[..<close])
                rest = rest[close...]
                if link.contains("://") || link.hasPrefix("mailto:") { continue }
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file = parts[0].isEmpty ? path : Self.resolve(String(parts[0]), from: path)
                #expect(Self.exists(file), "\(path) links to \(link), which is not in the repository")
                if parts.count == 2, let target = Repository.read(file) {
                    #expect(
                        Self.anchors(target).contains(String(parts[1])), "\(path) links to \(link): no such heading")
                }
                checked += 1
            }
        }
        #expect(checked >= 20)
    }

    @Test func docsNameNoDocumentTheProjectDoesNotShip() throws {
        for (path, text) in try Self.markdownDocuments() {
            // Words made of the characters of paths; URLs are not names of the project's files.
            let words = text.split { !($0.isLetter || $0.isNumber || "./-_#".contains($0)) }
            for word in words {
                let name =
                    word.split(separator: "#").first.map { String($0.reversed().drop { $0 == "." }.reversed()) } ?? ""
                guard name.hasSuffix(".md") || name.hasPrefix("docs/") else { continue }
                if word.hasPrefix("//") { continue }
                #expect(
                    Self.exists(Self.resolve(name, from: path)) || Self.exists(name),
                    "\(path) names \(name), which the project does not ship")
            }
            // Nor the design notes or the issue tracker, which readers of the docs do not have.
            let lower = text.lowercased()
            #expect(!text.contains("DESIGN"), "\(path) refers to the design notes, which the project does not ship")
            let issues = lower.split(separator: "issue ", omittingEmptySubsequences: false).dropFirst()
            #expect(
                !issues.contains { $0.first?.isNumber == true } && !lower.contains("the issue"),
                "\(path) refers to an issue of the tracker, which the project does not ship")
        }
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else {
            return ""
        }
        return self[first ... last]
    }
}
