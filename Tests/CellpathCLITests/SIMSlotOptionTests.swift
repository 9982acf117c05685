import CellpathCore
import Testing

@testable import CellpathCLI
@testable import CommandLineKit

/// `--sim-slot n`: declared once and the same way on every command that brings a modem's bearer
/// up, counted from 1.
@Suite struct SIMSlotOptionTests {
    @Test func theCommandsThatBringABearerUpDeclareTheSameSIMSlotOption() {
        let declared = IPTypeOptionTests.commands().compactMap { path, node in
            node.options.first { $0.long == "sim-slot" }.map { (path.joined(separator: " "), $0) }
        }
        #expect(
            Set(declared.map(\.0)) == [
                "cellpath fetch", "cellpath bearer up", "cellpath subscriber-check", "cellpath phone-check",
                "cellpath coverage", "cellpath verify"
            ])
        for (path, option) in declared {
            #expect(option.help == ModemOption.simSlot.spec.help, "\(path)")
            #expect(option.valueName == "n", "\(path)")
        }
    }

    @Test func theSlotIsReadAsGiven() throws {
        let parser = CommandLineParser(root: CommandTree.root)
        guard case .run(_, let up) = try parser.parse(["bearer", "up", "--sim-slot", "2"]),
            case .run(_, let fetch) = try parser.parse(["fetch", "-m", "0", "--sim-slot", "2", "https://a.test/"]),
            case .run(_, let check) = try parser.parse([
                "subscriber-check", "+447940448591", "--sim-slot", "1", "--repeat", "3"
            ]),
            case .run(_, let none) = try parser.parse(["bearer", "up"])
        else {
            Issue.record("not commands to run")
            return
        }
        #expect(try up.options(as: BearerUpCommand.Options.self).simSlot == .slot(2))
        #expect(try fetch.options(as: FetchCommand.Options.self).modemPath.simSlot == .slot(2))
        #expect(try check.options(as: DeviceCheckOptions.self).modemPath.simSlot == .slot(1))
        #expect(try none.options(as: BearerUpCommand.Options.self).simSlot == nil)
    }

    @Test(arguments: ["0", "two", "9"])
    func aSlotThatCannotBeIsRefused(text: String) {
        #expect(
            throws: UsageError(
                "invalid value '\(text)' for '--sim-slot': expected an integer from 1 to 8, or all",
                command: ["cellpath", "bearer", "up"])
        ) {
            try CommandLineParser(root: CommandTree.root).parse(["bearer", "up", "--sim-slot", text])
        }
    }

    /// `all` is read by every command that takes a slot; those that bring one bearer up refuse it
    /// (exit 64), the checks walk every SIM.
    @Test func allIsReadAndRefusedWhereOneBearerComesUp() throws {
        guard
            case .run(_, let check) = try CommandLineParser(root: CommandTree.root).parse([
                "phone-check", "-m", "all", "--sim-slot", "all", "--repeat", "2"
            ])
        else {
            Issue.record("not a command to run")
            return
        }
        #expect(try check.options(as: DeviceCheckOptions.self).modemPath.simSlot == .all)
        #expect(try SIMSlotChoice.single(.slot(2), command: ["cellpath", "fetch"]) == 2)
        #expect(try SIMSlotChoice.single(nil, command: ["cellpath", "fetch"]) == nil)
        #expect(
            throws: UsageError(
                "'--sim-slot all' walks every SIM in the checks (subscriber-check, phone-check, verify): "
                    + "this command brings one SIM's bearer up; give a slot number",
                command: ["cellpath", "bearer", "up"])
        ) {
            try SIMSlotChoice.single(.all, command: ["cellpath", "bearer", "up"])
        }
        #expect(ExitCode.forError(UsageError("x", command: [])) == .usage)
    }

    @Test func bearerDownAndStatusTakeNoSlot() {
        for command in [["bearer", "down"], ["bearer", "status"]] {
            #expect(throws: UsageError.self, "\(command)") {
                try CommandLineParser(root: CommandTree.root).parse(command + ["--sim-slot", "2"])
            }
        }
    }
}
