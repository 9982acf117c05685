/// A flag, declared once as a static constant beside its command: `spec` goes into the
/// command's options, and `parsed[flag]` tells whether it was given.
package struct Flag: Sendable {
    package let spec: OptionSpec

    package init(_ long: String, short: Character? = nil, help: String) {
        spec = OptionSpec(long: long, short: short, kind: .flag, help: help, repeatable: false)
    }
}

/// An option with a value, declared once as a static constant beside its command: `spec`
/// goes into the command's options, and `parsed[option]` is its last value, converted.
package struct OptionKey<Value: Sendable>: Sendable {
    package let spec: OptionSpec

    package init(_ long: String, short: Character? = nil, _ valueName: String, help: String, _ conversion: ValueConversion<Value>) {
        spec = OptionSpec(long: long, short: short, kind: .value(valueName: valueName, convert: conversion.convert),
                          help: help, repeatable: false)
    }
}

extension OptionKey where Value == String {
    /// An option whose value is the text as given.
    package init(_ long: String, short: Character? = nil, _ valueName: String, help: String) {
        self.init(long, short: short, valueName, help: help, .text)
    }
}

/// An option that may be given several times: `parsed[option]` is every value, in order.
package struct RepeatableOptionKey<Value: Sendable>: Sendable {
    package let spec: OptionSpec

    package init(_ long: String, short: Character? = nil, _ valueName: String, help: String, _ conversion: ValueConversion<Value>) {
        spec = OptionSpec(long: long, short: short, kind: .value(valueName: valueName, convert: conversion.convert),
                          help: help, repeatable: true)
    }
}

extension RepeatableOptionKey where Value == String {
    /// A repeatable option whose values are the texts as given.
    package init(_ long: String, short: Character? = nil, _ valueName: String, help: String) {
        self.init(long, short: short, valueName, help: help, .text)
    }
}

/// A required positional argument: `try parsed[argument]` is its value. With `joiningWords`, it
/// takes every remaining positional, joined by spaces (a phone number written in groups).
package struct ArgumentKey: Sendable {
    package let spec: ArgumentSpec

    package init(_ name: String, help: String, joiningWords: Bool = false) {
        spec = ArgumentSpec(name: name, help: help, joinsWords: joiningWords)
    }
}

/// An optional positional argument: `parsed[argument]` is its value, if given. With
/// `joiningWords`, it takes every remaining positional, joined by spaces.
package struct OptionalArgumentKey: Sendable {
    package let spec: ArgumentSpec

    package init(_ name: String, help: String, joiningWords: Bool = false) {
        spec = ArgumentSpec(name: name, help: help, optional: true, joinsWords: joiningWords)
    }
}

/// A positional argument that takes every remaining one (`sim exec -- CMD…`): `parsed[arguments]`
/// is all of them, in order.
package struct VariadicArgumentKey: Sendable {
    package let spec: ArgumentSpec

    package init(_ name: String, help: String) {
        spec = ArgumentSpec(name: name, help: help, variadic: true)
    }
}
