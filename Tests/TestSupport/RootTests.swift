import Glibc

/// Gate for tests that need root and network namespaces.
///
/// Outside CI such tests are skipped with a reason; when `CELLPATH_REQUIRE_ROOT_TESTS=1`
/// (set by `.ci/run`) they always run, so a missing privilege fails them instead.
public enum RootTests {
    /// True when the caller is root or root tests are required.
    public static var enabled: Bool { geteuid() == 0 || required }

    /// True when `CELLPATH_REQUIRE_ROOT_TESTS=1`.
    public static var required: Bool {
        guard let value = getenv("CELLPATH_REQUIRE_ROOT_TESTS") else { return false }
        return String(cString: value) == "1"
    }

    /// Reason shown when root tests are skipped.
    public static let skipReason = "needs root and network namespaces (run as root, or set CELLPATH_REQUIRE_ROOT_TESTS=1 to fail instead of skip)"
}
