/// `cellpath sim down`: stops everything the simulator started and deletes the world. Idempotent.
package enum SimDownCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "down",
        abstract: "Stop the simulator and delete its namespaces, devices and files (also after a crash).",
        options: [SimCommand.prefixOption.spec],
        action: .program(.simulator))
}
