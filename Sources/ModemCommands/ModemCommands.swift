import CellpathCLI
import CommandLineKit

extension ProgramImplementations {
    /// What `cellpath-modem` runs: the modem and bearer commands, doctor, and `fetch` with a modem's path.
    package static let modems = ProgramImplementations(
        .modems,
        [
            .async(ModemsCommand.spec, ModemsCommand.run),
            .async(ModemsShowCommand.spec, ModemsShowCommand.run),
            .async(BearerUpCommand.spec, BearerUpCommand.run),
            .async(BearerDownCommand.spec, BearerDownCommand.run),
            .async(BearerStatusCommand.spec, BearerStatusCommand.run),
            .async(DoctorCommand.spec, DoctorCommand.run),
            .async(FetchCommand.spec, FetchCommand.runWithModem)
        ])
}
