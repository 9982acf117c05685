import Glibc

/// Gate for tests that need root and network namespaces (the simulated worlds among them).
///
/// Outside CI such tests are skipped with a reason; when `CELLPATH_REQUIRE_ROOT_TESTS=1`
/// (set by `.ci/run`) they always run, so a missing privilege fails them instead.
/// `CELLPATH_SKIP_ROOT_TESTS=1` (`make test-unit`) skips them, also as root.
public enum RootTests {
    /// True when the caller is root or root tests are required, and they are not skipped.
    public static var enabled: Bool { !skipped && (geteuid() == 0 || required) }

    /// True when `CELLPATH_REQUIRE_ROOT_TESTS=1`.
    public static var required: Bool { flag("CELLPATH_REQUIRE_ROOT_TESTS") }

    /// True when `CELLPATH_SKIP_ROOT_TESTS=1`.
    public static var skipped: Bool { flag("CELLPATH_SKIP_ROOT_TESTS") }

    /// Reason shown when root tests are skipped.
    public static let skipReason =
        "needs root and network namespaces (run as root, or set "
        + "CELLPATH_REQUIRE_ROOT_TESTS=1 to fail instead of skip; CELLPATH_SKIP_ROOT_TESTS=1 skips them)"

    private static func flag(_ name: String) -> Bool {
        guard let value = getenv(name) else { return false }
        return String(cString: value) == "1"
    }
}
