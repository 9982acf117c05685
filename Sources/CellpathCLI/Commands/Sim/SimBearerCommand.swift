import CommandLineKit

/// `cellpath sim bearer connect|disconnect`: drives a modem's data path directly (a test hook
/// beside the MBIM/QMI control planes) and configures its wwan interface on the device.
package enum SimBearerCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "bearer",
        abstract: "Connect or disconnect a simulated bearer directly, without MBIM/QMI.",
        subcommands: [connect, disconnect],
        examples: [
            .init("Connect the first modem's bearer:", "cellpath sim bearer connect"),
            .init("Disconnect the second modem's:", "cellpath sim bearer disconnect --modem 1")
        ])

    /// `sim bearer connect|disconnect`'s options.
    package struct Options: CommandOptions {
        /// At most 32 modems per world (the scenario's limit): indexes 0 to 31; the world itself
        /// refuses an index beyond its own modems.
        @Option("modem", "index", help: "Modem index in the scenario (default: 0).", .integer(in: 0 ... 31))
        package var modem: Int = 0
        @SettingOption(.simPrefix) package var prefix: String?

        package init() {}
    }

    /// `sim bearer connect`.
    package static let connect = command(connect: true)
    /// `sim bearer disconnect`.
    package static let disconnect = command(connect: false)

    private static func command(connect: Bool) -> CommandSpec {
        CommandSpec(
            name: connect ? "connect" : "disconnect",
            abstract: connect
                ? "Open the modem's data path and give its wwan interface the bearer address."
                : "Close the modem's data path and remove the bearer address.",
            options: Options.self,
            placement: .program(.helper), privileges: .root,
            examples: connect
                ? [
                    .init("Connect the first modem's bearer:", "cellpath sim bearer connect"),
                    .init(
                        "Connect the second modem's, in the world created with --prefix lab-:",
                        "cellpath sim bearer connect --modem 1 --prefix lab-")
                ]
                : [
                    .init("Disconnect the first modem's bearer:", "cellpath sim bearer disconnect"),
                    .init(
                        "Disconnect the second modem's, in the world created with --prefix lab-:",
                        "cellpath sim bearer disconnect --modem 1 --prefix lab-")
                ])
    }
}
