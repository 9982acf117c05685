/// `cellpath sim log`: the fake API's and the carrier's request log, one JSON object per line.
package enum SimLogCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "log",
        abstract: "Print the request log of the fake tru.ID API and the carrier (one JSON object per line).",
        options: [SimCommand.prefixOption.spec],
        action: .program(.simulator))
}
