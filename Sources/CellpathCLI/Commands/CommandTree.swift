/// The whole command tree of cellpath; each command lives in its own file.
enum CommandTree {
    static let root = CommandSpec(
        name: "cellpath",
        abstract: "SIM-based mobile authentication (tru.ID SubscriberCheck style) from a Linux machine's cellular modem.",
        discussion: """
            cellpath finds the machine's WWAN modem, brings up its data bearer and sends a check_url
            request, with its whole redirect chain and DNS, through the cellular interface only.
            `cellpath sim` provides a complete simulated cellular world for trying it without hardware.
            """,
        options: GlobalOptions.specs,
        subcommands: []
    )
}
