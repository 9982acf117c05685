import CommandLineKit

/// `cellpath serve`: the backend that holds the tru.ID credentials, compatible with tru.ID's
/// development server. Runs in `cellpath-helper` (implemented in Sources/ServeCommands), the executable that
/// links libmicrohttpd and libphonenumber.
package enum ServeCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "serve",
        abstract: "Run the backend for the tutorial apps: tru.ID dev-server routes over a provider's API.",
        discussion: """
            Serves the routes of tru.ID's development server (POST /subscriber-check, GET
            /subscriber-check/{check_id}, /v0.2/…/exchange-code, /phone-check, /sim-check, coverage,
            traces) plus /healthz, /metrics and /openapi.json (docs/serve.md), calling the tru.ID API
            with the project's credentials (tru.json, configuration, CELLPATH_CLIENT_ID/SECRET or the
            dev-server's TRU_ID_CLIENT_ID/TRU_ID_CLIENT_SECRET). One JSON access-log line per request
            on stderr. SIGTERM or SIGINT: stop accepting, finish the requests in flight, exit 0.
            Exits 78 when the API refuses the credentials and 69 when it cannot be reached at start.
            --provider (or [serve] provider) answers the same routes with another provider's API
            and its profile ([twilio], [vonage], [camara]): SubscriberCheck and PhoneCheck as
            Twilio SNA or Vonage silent_auth, SIMCheck as CAMARA SIM Swap; a route the provider
            cannot serve gets 501 (docs/providers.md).
            """,
        options: Options.self,
        placement: .program(.helper),
        examples: [
            .init(
                "Serve the tutorial apps on 127.0.0.1:8080 with a project's tru.json:",
                "cellpath serve --tru-json tru.json"),
            .init(
                "Serve the network, to clients that send a key:",
                "cellpath serve --listen 0.0.0.0:8080 --api-key-file api.key"),
            .init("Serve the same routes over Twilio Verify SNA:", "cellpath serve --provider twilio")
        ],
        logsJSONLines: true)

    /// The providers `serve --provider` names.
    package enum ServedProviderName: String, Sendable, CaseIterable {
        case truid, twilio, vonage, camara
    }

    /// `serve`'s options: where it listens, who may call it, its limits, how it reaches the API.
    package struct Options: CommandOptions {
        @Option(
            "provider", "name",
            help: """
                Whose API answers the routes: truid, twilio, vonage or camara (default: [serve] provider, \
                else truid).
                """, .choice)
        package var provider: ServedProviderName?
        @Option(
            "listen", "address:port",
            help: "Address and port to listen on (default: 127.0.0.1:8080; [::1]:8080 for IPv6).")
        package var listen: String = "127.0.0.1:8080"
        @Option(
            "tls-cert", "path",
            help: "Serve HTTPS with this certificate chain (PEM); needs --tls-key.") package var tlsCert: String?
        @Option("tls-key", "path", help: "Private key (PEM) of --tls-cert.") package var tlsKey: String?
        @Option(
            "api-key-file", "path",
            help: "File holding the key clients must send (Authorization: Bearer KEY or X-Api-Key: KEY).")
        package var apiKeyFile: String?
        @RepeatableOption(
            "cors-origin", "origin",
            help: """
                Origin whose web pages may call serve, with CORS (repeatable; * for any, as the \
                dev-server; default: none, other origins get 403).
                """)
        package var corsOrigin: [String]
        @RepeatableOption(
            "server-name", "name",
            help: """
                Host name clients reach serve by, besides its listen address (repeatable; other Host \
                names get 421).
                """)
        package var serverName: [String]
        @Flag(
            "allow-form-bodies",
            help: "Read form bodies (application/x-www-form-urlencoded) as the dev-server does (default: JSON only).")
        package var allowFormBodies: Bool
        @Flag(
            "coverage-token-route",
            help: "Offer GET /coverage-access-token, which hands out coverage API tokens (default: off).")
        package var coverageTokenRoute: Bool
        @Option(
            "max-body", "bytes",
            help: "Largest request body accepted (default: 16384; larger: 413).", .integer(in: 256 ... 16_777_216))
        package var maxBody: Int?
        @Option(
            "max-connections", "count", help: "Connections open at once (default: 512).", .integer(in: 1 ... 65_536))
        package var maxConnections: Int?
        @Option(
            "max-connections-per-address", "count",
            help: "Connections open at once from one client address (default: 64).", .integer(in: 1 ... 65_536))
        package var maxConnectionsPerAddress: Int?
        @Option(
            "rate-limit", "per-minute",
            help: """
                Requests per client address and minute (default: 600; 0: no limit; beyond: 429).
                """, .integer(in: 0 ... 1_000_000))
        package var rateLimit: Int?
        @Option(
            "client-timeout", "seconds",
            help: """
                Close a connection idle or sending nothing this long (default: 30; slow clients).
                """, .integer(in: 1 ... 3600))
        package var clientTimeout: Int?
        @Option(
            "request-timeout", "seconds",
            help: """
                Close a connection that has not sent a whole request this long after opening or its last answer \
                (default: 20).
                """,
            .integer(in: 1 ... 3600))
        package var requestTimeout: Int?
        @Option(
            "upstream-timeout", "seconds",
            help: """
                Bound on each call to the tru.ID API (default: 10; beyond: 504 after retries).
                """, .integer(in: 1 ... 300))
        package var upstreamTimeout: Int?
        @OptionGroup package var api: TruAPIOptions
        @SettingOption(.caFile) package var caFile: String?
        @SettingOption(.region) package var region: String?

        package init() {}
    }
}
