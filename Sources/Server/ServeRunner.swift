import CellpathCore
import HTTPServer
import Synchronization
import SystemSupport
import Workflow

/// Runs `cellpath serve` until its task is cancelled (SIGTERM/SIGINT), then drains: new
/// requests get 503 with `Connection: close`, requests in flight finish (within
/// `drainTimeout`), and the server stops.
public enum ServeRunner {
    /// Checks the provider's credentials (`ServedProvider.checkCredentials`), then serves. Throws
    /// `.configuration` for credentials the API refuses and `.unavailable`/`.temporary` for an
    /// API that cannot be used.
    public static func run(
        settings: ServeSettings, provider: ServedProvider, log: @escaping @Sendable (String) -> Void,
        started: @Sendable (Int) -> Void = { _ in }
    ) async throws(CellpathError) {
        try await provider.checkCredentials()
        let routes = DevServerRoutes(
            provider: provider, settings: settings, metrics: ServerMetrics(provider: provider.name), log: log)
        let draining = Atomic<Bool>(false)
        let inFlight = Atomic<Int>(0)
        var tls: HTTPServer.TLSIdentity?
        if let certificate = settings.tlsCertificate, let key = settings.tlsKey {
            do {
                tls = try HTTPServer.TLSIdentity.files(certificate: certificate, privateKey: key)
            } catch let error as CellpathError {
                throw error
            } catch {
                throw CellpathError(.noInput, "cannot read the TLS certificate or key")
            }
        }
        let server: HTTPServer
        do {
            server = try HTTPServer(
                listener: .address(settings.listenAddress, port: settings.listenPort), tls: tls,
                limits: HTTPServer.Limits(
                    maxBodyBytes: settings.limits.maxBodyBytes,
                    maxHeaderBytes: settings.limits.maxHeaderBytes,
                    maxConnections: settings.limits.maxConnections,
                    maxConnectionsPerAddress: settings.limits.maxConnectionsPerAddress,
                    idleTimeoutSeconds: settings.limits.idleTimeoutSeconds,
                    requestTimeoutSeconds: settings.limits.requestTimeoutSeconds),
                maxRequestsInFlight: settings.limits.maxRequestsInFlight,
                answeredByServer: { request, status in routes.answeredByServer(request, status: status) }
            ) { request in
                if draining.load(ordering: .acquiring) {
                    return HTTPResponse(
                        status: 503, contentType: "application/json", body: #"{"error_message":"shutting down"}"#,
                        headers: ["Connection": "close", "Retry-After": "1"])
                }
                inFlight.add(1, ordering: .acquiringAndReleasing)
                defer { inFlight.subtract(1, ordering: .acquiringAndReleasing) }
                return await routes.respond(request)
            }
        } catch let error as CellpathError {
            throw error
        } catch {
            throw CellpathError(.unavailable, "cannot listen on \(settings.listenAddress):\(settings.listenPort)")
        }
        started(server.port)
        log(
            JSONValue.object([
                ("event", .string("listening")), ("provider", .string(provider.name)),
                ("address", .string(settings.listenAddress)),
                ("port", .int(server.port)), ("tls", .bool(tls != nil))
            ]).serialized)
        await waitUntilCancelled()
        draining.store(true, ordering: .releasing)
        // This task is cancelled: its sleeps would end at once, so the drain runs detached.
        let drainTimeout = settings.limits.drainTimeout
        let left = await Task.detached {
            let deadline = ContinuousClock.now + drainTimeout
            while inFlight.load(ordering: .acquiring) > 0 && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            return inFlight.load(ordering: .acquiring)
        }.value
        await stopOffThePool(server)
        log(JSONValue.object([("event", .string("stopped")), ("abandoned_requests", .int(left))]).serialized)
    }

    /// Stops `server` on a thread of its own: `stop()` blocks until every async handler has
    /// returned, and those handlers need the cooperative pool, which a blocked pool thread could
    /// starve (on a one-thread pool, it would).
    static func stopOffThePool(_ server: HTTPServer) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            do {
                try Threads.detach {
                    server.stop()
                    continuation.resume()
                }
            } catch {
                // No thread to be had: stopping here is all that is left.
                server.stop()
                continuation.resume()
            }
        }
    }

    /// Returns once the current task is cancelled.
    private static func waitUntilCancelled() async {
        let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = waiter.withLock { stored -> Bool in
                    if Task.isCancelled { return true }
                    stored = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            waiter.withLock { stored in
                stored?.resume()
                stored = nil
            }
        }
    }
}
