import CellpathCore
import Glibc
import SystemSupport

/// The executables that run cellpath's commands. The front links only what every command needs,
/// so that help, `fetch` and `report` pay nothing at start-up for the others' libraries; the
/// modem commands run apart because their executable may carry file capabilities. Every one of
/// them parses the whole command tree and prints all help; a command whose spec names another
/// program (`CommandAction.program`) is handed over to that program's executable with `exec`.
package enum Program: String, Sendable, CaseIterable {
    /// `cellpath`, the front: the client commands (libcurl, c-ares, libnl, GLib), help, version.
    case front = "cellpath"
    /// `cellpath modems`, `cellpath bearer`: adds libmbim and libqmi (with GIO); the only one
    /// that may be given file capabilities (`make install-capability`).
    case modems = "cellpath-modem"
    /// The rest, never capable: `sim …` (libmicrohttpd, GnuTLS), `number` (libphonenumber with
    /// protobuf, abseil and ICU), the checks, `coverage`, `sim-swap`, `verify` (the modem layer,
    /// libphonenumber, libcrypto) and `serve`. One executable for the four: each copy of the
    /// static Swift runtime costs 8 MB installed (docs/benchmarks.md, Installed size).
    case helper = "cellpath-helper"

    /// Where the executable may be: next to the running one (the build directory, or the
    /// libexec directory for a helper), then `../libexec/cellpath/` (installed: the front in
    /// `bin/`, the others in `libexec/cellpath/`).
    package var candidatePaths: [String] {
        let directory = (FileSystem.runningExecutable ?? "").split(separator: "/", omittingEmptySubsequences: false)
            .dropLast().joined(separator: "/")
        return ["\(directory)/\(rawValue)", "\(directory)/../libexec/cellpath/\(rawValue)"]
    }

    /// Replaces this process with the program, with the same arguments: the pid, the exit status
    /// and the signals are then the program's own. Returns only when that is impossible.
    package func exec(_ arguments: [String]) -> CellpathError {
        guard let path = candidatePaths.first(where: { access($0, X_OK) == 0 }) else {
            if let present = candidatePaths.first(where: { FileSystem.exists($0) }) {
                return CellpathError(
                    .permission, "\(present) may not be run by this user",
                    hint: "run it with sudo, or join the group that may run it (docs/operations.md, Privileges)")
            }
            return CellpathError(
                .internalError, "\(rawValue) is missing (looked for \(candidatePaths.joined(separator: " and ")))",
                hint: "build every executable (swift build, make build) or reinstall (make install)")
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        execv(path, argv)
        return CellpathError(SystemError("couldn't run \(path)"), kind: .internalError)
    }
}
