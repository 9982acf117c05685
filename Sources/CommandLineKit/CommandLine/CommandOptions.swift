import Synchronization

/// A command's options and arguments, as swift-argument-parser declares them: a struct whose
/// stored properties are `@Flag`, `@Option`, `@RepeatableOption`, `@Argument`,
/// `@OptionalArgument` and `@VariadicArgument` declarations, and `@OptionGroup`s of shared sets,
/// in the order help lists them. Each declaration is the option's spec, its storage and its read:
/// the parser fills a fresh value (`ParsedCommand.options(as:)`), and a command reads only what
/// its struct declares.
package protocol CommandOptions: Sendable {
    /// A value with nothing parsed yet: its declarations, for help and for the parser.
    init()
}

/// One declared option or argument, as the parser sees it. Modules may declare kinds of their own
/// (an option that carries a configuration setting) by wrapping one of the kinds here.
package protocol OptionDeclaration: Sendable {
    /// The option, or nil for a positional argument.
    var optionSpec: OptionSpec? { get }
    /// The positional argument, or nil for an option.
    var argumentSpec: ArgumentSpec? { get }
    /// Takes this declaration's value from the parsed command line.
    func bind(_ parsed: ParsedCommand) throws(UsageError)
}

/// An `@OptionGroup`: its members are declarations of the command that includes it.
private protocol DeclarationGroup {
    var members: any CommandOptions { get }
}

extension CommandOptions {
    /// Every declaration of this value, the groups' in their place, in order.
    package var declarations: [any OptionDeclaration] {
        Mirror(reflecting: self).children.flatMap { child -> [any OptionDeclaration] in
            if let group = child.value as? any DeclarationGroup { return group.members.declarations }
            return (child.value as? any OptionDeclaration).map { [$0] } ?? []
        }
    }

    /// The declarations of one kind (`SettingOption`), groups included.
    package func declarations<Kind>(of kind: Kind.Type) -> [Kind] {
        Mirror(reflecting: self).children.flatMap { child -> [Kind] in
            if let group = child.value as? any DeclarationGroup { return group.members.declarations(of: kind) }
            return (child.value as? Kind).map { [$0] } ?? []
        }
    }
}

/// A command without options or arguments of its own (a group; the global options still apply).
package struct NoOptions: CommandOptions {
    package init() {}
}

/// Where a declaration keeps what the parser found: set once, while the parser fills the value
/// it made, before anything reads it.
final class ParsedValue<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)

    init() {}

    var current: Value? { value.withLock { $0 } }

    func set(_ newValue: Value?) { value.withLock { $0 = newValue } }
}

/// A flag (`--json`): true when given.
@propertyWrapper
package struct Flag: OptionDeclaration {
    package let spec: OptionSpec
    private let given = ParsedValue<Bool>()

    package init(_ long: String, short: Character? = nil, help: String) {
        spec = OptionSpec(long: long, short: short, kind: .flag, help: help, repeatable: false)
    }

    /// The same flag, declared again in another command (its own storage).
    package init(_ declaration: Flag) {
        spec = declaration.spec
    }

    package var wrappedValue: Bool { given.current ?? false }

    package var optionSpec: OptionSpec? { spec }
    package var argumentSpec: ArgumentSpec? { nil }

    package func bind(_ parsed: ParsedCommand) throws(UsageError) {
        given.set(parsed.flags.contains(spec.long))
    }
}

/// An option with a value (`--region GB`): its last value, converted; when not given, its
/// default: `@Option(…) var maxHops: Int = 10`, or nil for an optional (`var region: String?`).
@propertyWrapper
package struct Option<Value: Sendable>: OptionDeclaration {
    package let spec: OptionSpec
    private let defaultValue: Value
    private let value = ParsedValue<Value>()

    /// An option with a default: the value when it is not given.
    package init(
        wrappedValue: Value, _ long: String, short: Character? = nil, _ valueName: String, help: String,
        _ conversion: ValueConversion<Value>
    ) {
        spec = OptionSpec(
            long: long, short: short, kind: .value(valueName: valueName, convert: conversion.convert),
            help: help, repeatable: false, completion: conversion.completion)
        defaultValue = wrappedValue
    }

    /// An optional option: nil when it is not given.
    package init<Wrapped>(
        _ long: String, short: Character? = nil, _ valueName: String, help: String,
        _ conversion: ValueConversion<Wrapped>
    ) where Value == Wrapped? {
        spec = OptionSpec(
            long: long, short: short, kind: .value(valueName: valueName, convert: conversion.convert),
            help: help, repeatable: false, completion: conversion.completion)
        defaultValue = nil
    }

    /// The same option, declared again in another command (its own storage).
    package init(_ declaration: Option<Value>) {
        spec = declaration.spec
        defaultValue = declaration.defaultValue
    }

    package var wrappedValue: Value { value.current ?? defaultValue }

    package var optionSpec: OptionSpec? { spec }
    package var argumentSpec: ArgumentSpec? { nil }

    package func bind(_ parsed: ParsedCommand) throws(UsageError) {
        value.set(parsed.optionValues[spec.long]?.last as? Value)
    }
}

extension Option where Value == String? {
    /// An optional option whose value is the text as given (a file's path for `<file>` and `<path>`).
    package init(_ long: String, short: Character? = nil, _ valueName: String, help: String) {
        self.init(long, short: short, valueName, help: help, .text(named: valueName))
    }
}

extension Option where Value == String {
    /// An option with a default whose value is the text as given (a file's path for `<file>` and `<path>`).
    package init(wrappedValue: String, _ long: String, short: Character? = nil, _ valueName: String, help: String) {
        self.init(wrappedValue: wrappedValue, long, short: short, valueName, help: help, .text(named: valueName))
    }
}

/// An option that may be given several times (`-H a -H b`): every value, in order.
@propertyWrapper
package struct RepeatableOption<Value: Sendable>: OptionDeclaration {
    package let spec: OptionSpec
    private let values = ParsedValue<[Value]>()

    package init(
        _ long: String, short: Character? = nil, _ valueName: String, help: String,
        _ conversion: ValueConversion<Value>
    ) {
        spec = OptionSpec(
            long: long, short: short, kind: .value(valueName: valueName, convert: conversion.convert),
            help: help, repeatable: true, completion: conversion.completion)
    }

    package var wrappedValue: [Value] { values.current ?? [] }

    package var optionSpec: OptionSpec? { spec }
    package var argumentSpec: ArgumentSpec? { nil }

    package func bind(_ parsed: ParsedCommand) throws(UsageError) {
        values.set(parsed.optionValues[spec.long]?.compactMap { $0 as? Value } ?? [])
    }
}

extension RepeatableOption where Value == String {
    /// A repeatable option whose values are the texts as given (files' paths for `<file>` and `<path>`).
    package init(_ long: String, short: Character? = nil, _ valueName: String, help: String) {
        self.init(long, short: short, valueName, help: help, .text(named: valueName))
    }
}

/// A required positional argument. With `joiningWords`, it takes every remaining positional,
/// joined by spaces (a phone number written in groups).
@propertyWrapper
package struct Argument: OptionDeclaration {
    package let spec: ArgumentSpec
    private let value = ParsedValue<String>()

    package init(_ name: String, help: String, joiningWords: Bool = false, completion: ValueCompletion = .none) {
        spec = ArgumentSpec(name: name, help: help, joinsWords: joiningWords, completion: completion)
    }

    /// The value; the parser has refused a command line without it, and `bind` a parse without it.
    package var wrappedValue: String {
        guard let current = value.current else { preconditionFailure("<\(spec.name)> read before it was parsed") }
        return current
    }

    package var optionSpec: OptionSpec? { nil }
    package var argumentSpec: ArgumentSpec? { spec }

    package func bind(_ parsed: ParsedCommand) throws(UsageError) {
        guard let given = parsed.arguments[spec.name]?.first else {
            throw UsageError.missingArgument(spec, command: parsed.path)
        }
        value.set(given)
    }
}

/// An optional positional argument: nil when not given. With `joiningWords`, it takes every
/// remaining positional, joined by spaces.
@propertyWrapper
package struct OptionalArgument: OptionDeclaration {
    package let spec: ArgumentSpec
    private let value = ParsedValue<String>()

    package init(_ name: String, help: String, joiningWords: Bool = false) {
        spec = ArgumentSpec(name: name, help: help, optional: true, joinsWords: joiningWords)
    }

    package var wrappedValue: String? { value.current }

    package var optionSpec: OptionSpec? { nil }
    package var argumentSpec: ArgumentSpec? { spec }

    package func bind(_ parsed: ParsedCommand) throws(UsageError) {
        value.set(parsed.arguments[spec.name]?.first)
    }
}

/// A positional argument that takes every remaining one (`sim exec -- CMD…`), in order; required
/// unless `optional`.
@propertyWrapper
package struct VariadicArgument: OptionDeclaration {
    package let spec: ArgumentSpec
    private let values = ParsedValue<[String]>()

    package init(_ name: String, help: String, optional: Bool = false, completion: ValueCompletion = .none) {
        spec = ArgumentSpec(name: name, help: help, optional: optional, variadic: true, completion: completion)
    }

    package var wrappedValue: [String] { values.current ?? [] }

    package var optionSpec: OptionSpec? { nil }
    package var argumentSpec: ArgumentSpec? { spec }

    package func bind(_ parsed: ParsedCommand) throws(UsageError) {
        values.set(parsed.arguments[spec.name] ?? [])
    }
}

/// A shared set of options (`@OptionGroup var backend: ModemBackendOptions`), declared once in a
/// struct of its own and included by the commands that take it, in its place in their help.
@propertyWrapper
package struct OptionGroup<Group: CommandOptions>: Sendable {
    package let wrappedValue: Group

    package init() {
        wrappedValue = Group()
    }
}

extension OptionGroup: DeclarationGroup {
    fileprivate var members: any CommandOptions { wrappedValue }
}

extension ParsedCommand {
    /// The command line's values in a fresh `Options`: every declaration bound. Throws when a
    /// required argument is missing.
    package func options<Options: CommandOptions>(as type: Options.Type) throws(UsageError) -> Options {
        let options = Options()
        for declaration in options.declarations { try declaration.bind(self) }
        return options
    }
}
