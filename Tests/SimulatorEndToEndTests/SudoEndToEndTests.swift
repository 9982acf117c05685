import CellpathCore
import Glibc
import TestSupport
import Testing

/// `sudo cellpath sim exec -- cellpath …`, as users run it: root with `SUDO_UID` set. The
/// world's overrides (sysfs and /dev roots, record directory, CA) name trees under
/// /run/cellpath-sim that only root can change, so the privileged cellpath follows them.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct SudoEndToEndTests {
    private static let sudo = ["SUDO_UID": "65534", "SUDO_GID": "65534", "HOME": "/root"]

    @Test func underSudoTheWorldsOverridesAreFollowedWithoutWarnings() throws {
        try SimulatedDevice.with(connect: false) { device in
            func cellpath(_ arguments: [String]) throws -> ProcessResult {
                try CellpathBinary.run(
                    ["sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path] + arguments,
                    environment: Self.sudo)
            }
            let modems = try cellpath(["modems", "--json"])
            #expect(modems.status == 0 && modems.stderr == "", "\(modems.stderr)")
            #expect(try JSONValue.parse(modems.stdout)["modems"]?.array?.isEmpty == false)
            let up = try cellpath(["bearer", "up", "-m", "0", "--json"])
            #expect(up.status == 0 && !up.stderr.contains("ignoring"), "\(up.stderr)")
            let state = try #require(try device.environment()["CELLPATH_STATE_DIR"])
            #expect(
                try ProcessRunner.run(["ls", state]).stdout.hasPrefix("bearer-"),
                "the record is in the world's directory")
            let down = try cellpath(["bearer", "down", "-m", "0"])
            #expect(down.status == 0, "\(down.stderr)")
        }
    }
}
