import Bearers
import CellpathCLI
import CellpathCore
import CommandLineKit
import ModemDiscovery
import Modems

extension ModemsCommand {
    /// Where discovery looks: `CELLPATH_SYSFS_ROOT` and `CELLPATH_DEV_ROOT`, else /sys and /dev.
    package static func deviceRoots(_ context: CommandContext) -> DeviceRoots {
        DeviceRoots(environment: context.environment)
    }

    static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let (discovery, reader) = setUp(options.backend, timeout: options.timeout, context)
        let found = discovery.discover()
        let reports = await read(found.modems, with: reader, context)
        for report in reports {
            if let error = report.error { context.logger.warning("modem \(report.modem.index): \(error.message)") }
        }
        return CommandOutcome(
            ModemListing.list(
                reports, context.global.disclosure, roots: discovery.roots,
                uncontrolled: found.uncontrolled))
    }

    /// Discovery (with the roots the environment names) and a reader that reaches the modems as
    /// `backend` says, each read within `timeout` (`modems --timeout`; 10 s by default).
    package static func setUp(
        _ backend: ModemBackendOptions, timeout: Double?,
        _ context: CommandContext
    ) -> (ModemDiscovery, ModemStatusReader) {
        ModemLibraries.configure(logger: context.logger)
        var access = ModemAccess(useProxy: !backend.noProxy)
        if let timeout { access.timeout = .seconds(timeout) }
        return (
            ModemDiscovery(roots: deviceRoots(context)),
            ModemStatusReader(access: access, logger: context.logger, opener: backend.choice.opener)
        )
    }

    /// The note of a modem that udev marks for ModemManager to ignore.
    package static let ignoredNote =
        "ModemManager ignores it (udev ID_MM_DEVICE_IGNORE=1): --backend auto uses cellpath's own client"

    /// Reads every modem at once; one that fails is reported with its error.
    package static func read(
        _ modems: [DiscoveredModem], with reader: ModemStatusReader, _ context: CommandContext
    ) async -> [ModemReport] {
        if !modems.isEmpty {
            context.progress.step("reading \(modems.count == 1 ? "the modem" : "\(modems.count) modems")")
        }
        let records = BearerRecords(environment: context.environment)
        let udev = UdevDatabase(roots: deviceRoots(context))
        return await withTaskGroup(of: ModemReport.self) { group in
            for modem in modems {
                group.addTask {
                    var scoped = reader
                    scoped.logger = reader.logger.scoped("modem\(modem.index)")
                    // A bearer cellpath brought up with IPv6 is shown with it (QMI: read on a second client).
                    let record: BearerRecord?
                    do throws(CellpathError) {
                        record = try records.load(for: modem)
                    } catch {
                        reader.logger.warning("\(error.message)\(error.hint.map { " (\($0))" } ?? "")")
                        record = nil
                    }
                    let expected: BearerIPType? = record?.hasIPv6 == true ? .ipv6 : nil
                    let note = udev.modemManagerIgnores(modem.ports[0]) ? Self.ignoredNote : nil
                    do throws(ModemError) {
                        return ModemReport(
                            modem: modem, result: .success(try await scoped.status(of: modem, expecting: expected)),
                            note: note)
                    } catch {
                        return ModemReport(modem: modem, result: .failure(error), note: note)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }.sorted { $0.modem.index < $1.modem.index }
        }
    }
}

extension ModemsShowCommand {
    static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let selector = try selector(options, command: context.command)
        let (discovery, reader) = ModemsCommand.setUp(
            options.reading.backend, timeout: options.reading.timeout,
            context)
        let found = discovery.discover()
        let choice = try await ModemSelection.choose(
            selector, among: found.modems, roots: discovery.roots, uncontrolled: found.uncontrolled,
            disclosure: context.global.disclosure,
            read: { await ModemsCommand.read($0, with: reader, context) })
        switch choice {
        case .refused(let outcome):
            return outcome
        case .chosen(let modem, let report):
            let chosen: ModemReport
            if let report {
                chosen = report
            } else {
                chosen = await ModemsCommand.read([modem], with: reader, context)[0]
            }
            return ModemListing.show(chosen, context.global.disclosure)
        }
    }
}
