import CellpathCore
import CellularHTTP
import CommandLineKit
import Configuration
import SystemSupport

/// The checks that send something: the backend over the default network, and a name resolved
/// through the bearer's DNS servers. Each is one request within the doctor's timeout.
enum NetworkChecks {
    /// The backend's base URL (the development server, else the tru.ID API) and the CA file to trust.
    static func backend(_ context: CommandContext) -> (url: String, caFile: String?)? {
        let loader = ConfigurationLoader(environment: context.environment, caller: context.caller)
        guard let configuration = try? loader.load(),
            let url = ((try? configuration.serverBaseURL) ?? nil) ?? (try? configuration.apiBaseURL)
        else {
            return nil
        }
        return (url, (try? configuration.caFile) ?? nil)
    }

    /// One HEAD request to the configured backend over the default network (never the cellular
    /// interface), with the interface it left from.
    static func backendReachability(_ context: CommandContext, timeout: Double) async -> DoctorCheck {
        guard let (url, caFile) = backend(context) else {
            return DoctorCheck("backend", .skip, "no backend configured")
        }
        context.progress.step("reaching \(url)")
        let request = HTTPClientRequest(
            url: url, method: "HEAD", timeout: .milliseconds(Int64(timeout * 1000)),
            caFile: caFile, maxBodyBytes: 0)
        do {
            let response = try await HTTPClient(route: .defaultNetwork).send(request)
            let trace = response.trace
            let interface = InterfaceSnapshot.networks().first { $0.address == trace.localAddress }?.interface ?? "?"
            return DoctorCheck(
                "backend", .pass, "\(url) answers over the default network",
                evidence: [
                    "HEAD \(url): HTTP \(response.status) in \(Int(trace.timings.totalMs)) ms",
                    "over the default network: from \(trace.localAddress) on \(interface), "
                        + "to \(trace.remoteAddress) (not through the cellular interface)"
                ])
        } catch {
            return DoctorCheck(
                "backend", .fail, "\(url) is not reachable over the default network",
                evidence: ["HEAD \(url): \(error.reason.rawValue): \(error.message)"],
                remedy: error.hint ?? "check the machine's default network, proxy and firewall")
        }
    }

    /// The backend's host resolved through the bearer's DNS servers, over the bearer (one HEAD
    /// request through the cellular path: nothing else of it leaves).
    static func dnsThroughBearer(
        _ path: CellularPath, modem: Int, _ context: CommandContext,
        timeout: Double
    ) async -> DoctorCheck {
        guard let (url, caFile) = backend(context) else {
            return DoctorCheck("dns", modem: modem, .skip, "no backend configured whose name to resolve")
        }
        context.progress.step("modem \(modem): resolving through the bearer's DNS")
        let evidence = ["DNS servers: \(path.dnsServers.isEmpty ? "none" : path.dnsServers.joined(separator: ", "))"]
        let request = HTTPClientRequest(
            url: url, method: "HEAD", timeout: .milliseconds(Int64(timeout * 1000)),
            caFile: caFile, maxBodyBytes: 0)
        do {
            let response = try await HTTPClient(route: .bound(path)).send(request)
            let answers = response.trace.dnsAnswers ?? [response.trace.remoteAddress]
            return DoctorCheck(
                "dns", modem: modem, .pass, "the backend's name resolves through the bearer",
                evidence: evidence + [
                    "answers: \(answers.joined(separator: ", "))",
                    "HEAD \(url) through \(path.interfaceName): "
                        + "HTTP \(response.status)"
                ])
        } catch  where error.reason.rawValue.hasPrefix("dns") {
            return DoctorCheck(
                "dns", modem: modem, .fail,
                "the backend's name does not resolve through the bearer's DNS",
                evidence: evidence + ["\(error.reason.rawValue): \(error.message)"],
                remedy: error.hint ?? "reconnect the bearer (its DNS servers come from the network)")
        } catch {
            return DoctorCheck(
                "dns", modem: modem, .warn,
                "the name resolved, but the request through the bearer failed",
                evidence: evidence + ["\(error.reason.rawValue): \(error.message)"], remedy: error.hint)
        }
    }
}
