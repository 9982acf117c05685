// swift-tools-version:6.0
// cellpath: SIM-based mobile authentication from a Linux machine's WWAN modem.
// No package outside the toolchain: C libraries come from Debian (see Makefile `deps`).
import PackageDescription

/// A system library target over a Debian -dev package found with pkg-config.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let package = Package(
    name: "cellpath",
    products: [
        .executable(name: "cellpath", targets: ["cellpath"]),
    ],
    targets: [
        // MARK: C libraries
        systemLibrary("CGLib", pkgConfig: "glib-2.0", apt: "libglib2.0-dev"),
        systemLibrary("CMBIM", pkgConfig: "mbim-glib", apt: "libmbim-glib-dev"),
        systemLibrary("CQMI", pkgConfig: "qmi-glib", apt: "libqmi-glib-dev"),
        systemLibrary("CCurl", pkgConfig: "libcurl", apt: "libcurl4-openssl-dev"),
        systemLibrary("CAres", pkgConfig: "libcares", apt: "libc-ares-dev"),
        systemLibrary("CMicroHTTPD", pkgConfig: "libmicrohttpd", apt: "libmicrohttpd-dev"),
        systemLibrary("CNetlink", pkgConfig: "libnl-route-3.0", apt: "libnl-route-3-dev"),

        .target(name: "CShims"),

        // MARK: Swift modules (dependencies point down, see docs/architecture.md)
        .target(name: "CellpathCore"),
        .target(name: "Simulator", dependencies: ["CellpathCore", "CShims"]),
        .target(name: "CellpathCLI", dependencies: ["CellpathCore", "Simulator"]),
        .executableTarget(name: "cellpath", dependencies: ["CellpathCLI"]),

        // MARK: Tests
        .target(name: "TestSupport", dependencies: ["CellpathCore"], path: "Tests/TestSupport"),
        .testTarget(name: "CellpathCLITests", dependencies: ["CellpathCLI", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport"]),
        .testTarget(name: "SimulatorModemTests", dependencies: ["Simulator", "CellpathCore", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
