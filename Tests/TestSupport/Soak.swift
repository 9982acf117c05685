import Glibc

/// The soak tests' sizes: short in the test suite, long under `make soak` (`CELLPATH_SOAK=1`);
/// `CELLPATH_SOAK_CHECKS` and `CELLPATH_SOAK_SECONDS` set a size of their own (a scaled run).
public enum Soak {
    /// Whether `make soak` runs the tests.
    public static var isLong: Bool { variable("CELLPATH_SOAK") == "1" }

    /// The checks of a field soak: `short`, or `long` under `make soak`.
    public static func checks(short: Int, long: Int) -> Int {
        variable("CELLPATH_SOAK_CHECKS").flatMap { Int($0) } ?? (isLong ? long : short)
    }

    /// The seconds of a load soak: `short`, or `long` under `make soak`.
    public static func seconds(short: Int, long: Int) -> Int {
        variable("CELLPATH_SOAK_SECONDS").flatMap { Int($0) } ?? (isLong ? long : short)
    }

    /// A figure for docs/benchmarks.md's Soak section, on stdout.
    public static func report(_ line: String) {
        print("soak: \(line)")
    }

    private static func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
