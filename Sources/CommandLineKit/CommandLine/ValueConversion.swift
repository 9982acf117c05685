/// Why an option's text is not a valid value; the parser reports it as
/// `invalid <noun> '<text>' for '--<option>': expected <expectation>`.
package struct InvalidOptionValue: Error, Sendable {
    /// What the value is called: "value" or "duration".
    package var noun = "value"
    /// What a valid value looks like: "an integer from 1 to 50".
    package var expectation: String

    package init(noun: String = "value", expectation: String) {
        self.noun = noun
        self.expectation = expectation
    }
}

/// How an option's text becomes its typed value: every conversion, and what a bad value is
/// told, is declared here.
package struct ValueConversion<Value: Sendable>: Sendable {
    package let convert: @Sendable (String) throws(InvalidOptionValue) -> Value
    /// What a shell offers for the value (`cellpath completion`).
    package let completion: ValueCompletion

    package init(
        completion: ValueCompletion = .none, _ convert: @escaping @Sendable (String) throws(InvalidOptionValue) -> Value
    ) {
        self.convert = convert
        self.completion = completion
    }

    /// The same conversion, with the shell offering `completion` for its value.
    package func completed(as completion: ValueCompletion) -> ValueConversion {
        ValueConversion(completion: completion, convert)
    }
}

extension ValueConversion where Value == String {
    /// The text as given.
    package static var text: ValueConversion { ValueConversion { $0 } }

    /// A file's path, as given: the shell completes file names.
    package static var path: ValueConversion { text.completed(as: .files) }

    /// The text as given; a file's path when its placeholder says so (`<file>`, `<path>`).
    package static func text(named valueName: String) -> ValueConversion {
        ["file", "path"].contains(valueName) ? path : text
    }
}

extension ValueConversion where Value == Int {
    /// A decimal integer within `range`.
    package static func integer(in range: ClosedRange<Int>) -> ValueConversion {
        ValueConversion { text throws(InvalidOptionValue) in
            guard let number = Int(text), range.contains(number) else {
                throw InvalidOptionValue(expectation: "an integer from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
    }
}

extension ValueConversion where Value == Double {
    /// A positive duration in seconds: `5`, `2.5s` or `500ms`.
    package static var seconds: ValueConversion { duration(allowingZero: false) }

    /// A duration in seconds that may be zero (`0`: no wait): `0`, `5`, `2.5s` or `500ms`.
    package static var secondsOrZero: ValueConversion { duration(allowingZero: true) }

    private static func duration(allowingZero: Bool) -> ValueConversion {
        ValueConversion { text throws(InvalidOptionValue) in
            let number: Double?
            if text.hasSuffix("ms") {
                number = Double(text.dropLast(2)).map { $0 / 1000 }
            } else if text.hasSuffix("s") {
                number = Double(text.dropLast())
            } else {
                number = Double(text)
            }
            guard let number, allowingZero ? number >= 0 : number > 0, number.isFinite else {
                throw InvalidOptionValue(
                    noun: "duration",
                    expectation: allowingZero ? "seconds, e.g. 0, 5, 2.5 or 500ms" : "seconds, e.g. 5, 2.5 or 500ms")
            }
            return number
        }
    }
}

extension ValueConversion where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
    /// One of the type's cases, by raw value (`--color auto|always|never`).
    package static var choice: ValueConversion {
        ValueConversion(completion: .choices(Value.allCases.map(\.rawValue))) { text throws(InvalidOptionValue) in
            guard let value = Value(rawValue: text) else {
                throw InvalidOptionValue(
                    expectation: "one of " + Value.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return value
        }
    }
}
