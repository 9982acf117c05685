import Testing
import TestSupport

/// The usage docs and the man page are generated from `--help`: they must not go stale.
@Suite struct DocumentationTests {
    @Test(arguments: [("markdown", "docs/usage.md"), ("man", "docs/cellpath.1")])
    func generatedDocsAreCurrent(format: String, path: String) throws {
        let generated = try CellpathBinary.run(["generate-docs", "--format", format])
        #expect(generated.status == 0)
        #expect(Repository.read(path) == generated.stdout, "\(path) is stale: run `make docs`")
    }

    @Test func readmeListsEveryExitCode() throws {
        let readme = try #require(Repository.read("README.md"))
        let help = try CellpathBinary.run(["--help"]).stdout
        let codes = help.split(separator: "\n").drop { $0 != "EXIT CODES:" }.dropFirst()
        #expect(codes.count >= 10)
        for line in codes {
            let number = line.split(separator: " ").first.map(String.init) ?? ""
            #expect(readme.contains("| \(number) |"), "README lacks exit code \(number)")
        }
    }
}
