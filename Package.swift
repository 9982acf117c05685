// swift-tools-version:6.0
// cellpath: SIM-based mobile authentication from a Linux machine's WWAN modem.
// No package outside the toolchain: C libraries come from Debian (see Makefile `deps`).
import PackageDescription

/// A system library target over a Debian -dev package found with pkg-config.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt([apt])])
}

/// The directory of this manifest: the package's root.
let packageRoot = String(#filePath.dropLast("/Package.swift".count))

/// A system library target over GIO or a library built on it, found with the package's own
/// pkg-config file (pkgconfig/): through gio-2.0.pc, SwiftPM would read the `-pthread` of its
/// private requirement gmodule-no-export-2.0 and warn about it for every such target.
func gioLibrary(_ name: String, pkgConfigFile: String, apt: String) -> Target {
    systemLibrary(name, pkgConfig: "\(packageRoot)/pkgconfig/\(pkgConfigFile)", apt: apt)
}

/// How executables that load no C++ library are linked in release builds: with lld, and
/// libstdc++ linked statically (a linker script in link/static-libstdc++ sends `-lstdc++` to the
/// toolchain's `libstdc++.a`), which saves each start-up the shared library's loading and
/// relocation (docs/benchmarks.md, "Start-up and memory"). Not `cellpath-helper`: libphonenumber
/// loads the shared libstdc++, and one process must not hold two copies.
let staticLibstdcxxLinking: [String] = ["-use-ld=lld", "-L\(packageRoot)/link/static-libstdc++"]

/// How the front `cellpath` is linked in release builds, so that a fetch maps as little as it can
/// (docs/benchmarks.md, "Start-up and memory"): static libstdc++ as above, and its functions laid
/// out in the order a fetch runs them (link/cellpath.order, made by `make order-file`; symbols it
/// no longer finds are ignored).
let frontReleaseLinking: [LinkerSetting] = [
    .unsafeFlags(
        staticLibstdcxxLinking + [
            "-Xlinker", "--symbol-ordering-file=\(packageRoot)/link/cellpath.order",
            "-Xlinker", "--no-warn-symbol-ordering"
        ],
        .when(configuration: .release))
]

/// How `cellpath-modem` is linked in release builds: its closure (GIO, libmbim, libqmi,
/// libmm-glib, libnl, c-ares) holds no C++ library, so libstdc++ is linked statically.
let modemReleaseLinking: [LinkerSetting] = [.unsafeFlags(staticLibstdcxxLinking, .when(configuration: .release))]

let package = Package(
    name: "cellpath",
    // One front and the executables it hands commands to, so that no command loads another's
    // C libraries at start-up (docs/architecture.md, Executables).
    products: [
        .executable(name: "cellpath", targets: ["cellpath"]),
        .executable(name: "cellpath-modem", targets: ["cellpath-modem"]),
        .executable(name: "cellpath-helper", targets: ["cellpath-helper"])
    ],
    targets: [
        // MARK: C libraries
        systemLibrary("CGLib", pkgConfig: "glib-2.0", apt: "libglib2.0-dev"),
        gioLibrary("CGIO", pkgConfigFile: "cellpath-gio.pc", apt: "libglib2.0-dev"),
        gioLibrary("CMBIM", pkgConfigFile: "cellpath-mbim.pc", apt: "libmbim-glib-dev"),
        gioLibrary("CQMI", pkgConfigFile: "cellpath-qmi.pc", apt: "libqmi-glib-dev"),
        gioLibrary("CModemManager", pkgConfigFile: "cellpath-mm.pc", apt: "libmm-glib-dev"),
        systemLibrary("CAres", pkgConfig: "libcares", apt: "libc-ares-dev"),
        systemLibrary("CMicroHTTPD", pkgConfig: "libmicrohttpd", apt: "libmicrohttpd-dev"),
        systemLibrary("CNetlink", pkgConfig: "libnl-route-3.0", apt: "libnl-route-3-dev"),
        systemLibrary("COpenSSL", pkgConfig: "libcrypto", apt: "libssl-dev"),
        // libphonenumber has no pkg-config file: a C++ target with a plain C header links it.
        .target(
            name: "CPhoneNumber",
            linkerSettings: [.linkedLibrary("phonenumber"), .linkedLibrary("protobuf")]
        ),

        // libc-only helpers: namespace switches on private threads, TUN, socket binding.
        .target(name: "CShims"),
        // libcurl (libcurl4-openssl-dev), loaded on first use: no command pays for its dependency
        // closure at start-up unless it makes an HTTP request (docs/architecture.md, Executables).
        .target(name: "CCurl"),

        // MARK: Swift modules (dependencies point down, see docs/architecture.md)
        .target(name: "CellpathCore"),
        // One set of POSIX helpers: descriptors, errno errors, I/O, threads, spawn, signals.
        .target(name: "SystemSupport", dependencies: ["CellpathCore", "CShims"]),
        // SHA-256 over libcrypto, for the webhook signer (SimulatedServices) and verifier (Server).
        .target(name: "CellpathCrypto", dependencies: ["COpenSSL", "CellpathCore"]),
        .target(name: "PhoneNumbers", dependencies: ["CPhoneNumber", "CellpathCore"]),
        .target(name: "Configuration", dependencies: ["CGLib", "CellpathCore", "SystemSupport"]),
        // `cellpath report`: field runs' JSON Lines read as a stream, aggregated, rendered as HTML, CSV, JSON.
        .target(name: "FieldReport", dependencies: ["CellpathCore", "SystemSupport"]),
        .target(
            name: "CellularHTTP",
            dependencies: ["CellpathCore", "SystemSupport", "CCurl", "CAres", "CNetlink", "CShims"]),
        .target(name: "Workflow", dependencies: ["CellpathCore", "CellularHTTP", "SystemSupport"]),
        // CAMARA network APIs (Number Verification over OIDC, SIM Swap): beside Workflow, not in
        // it, so that the front (which imports Workflow) links no libcrypto.
        .target(
            name: "CAMARA",
            dependencies: ["CellpathCore", "CellularHTTP", "CellpathCrypto", "SystemSupport", "Workflow"]),
        .target(name: "ModemDiscovery", dependencies: ["SystemSupport"]),
        .target(name: "IPConfiguration", dependencies: ["CNetlink", "CellpathCore", "SystemSupport"]),
        // One GLib main-loop thread behind a global actor; libmbim and libqmi run only there.
        .target(name: "GLibRuntime", dependencies: ["CGIO", "CellpathCore", "SystemSupport"]),
        .target(
            name: "Modems", dependencies: ["GLibRuntime", "ModemDiscovery", "CellpathCore", "CGIO", "CMBIM", "CQMI"]),
        // The modem backend over ModemManager's D-Bus API (libmm-glib), beside the direct MBIM and QMI ones.
        .target(
            name: "ModemManagerBackend",
            dependencies: ["Modems", "GLibRuntime", "ModemDiscovery", "CellpathCore", "CGIO", "CModemManager"]),
        // Bringing a modem's bearer up and down: the steps, their undo, the records under /run/cellpath.
        .target(
            name: "Bearers",
            dependencies: ["Modems", "IPConfiguration", "ModemDiscovery", "CellpathCore", "SystemSupport"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CellpathCore", "SystemSupport"]),
        // The simulated world, in three layers: scenario model → modems / web services → world.
        .target(name: "SimulatorScenario", dependencies: ["CellpathCore", "SystemSupport"]),
        .target(
            name: "SimulatedModems",
            dependencies: [
                "SimulatorScenario", "CellpathCore", "SystemSupport", "CShims",
                "CellpathCrypto"
            ]),
        .target(
            name: "SimulatedServices",
            dependencies: [
                "SimulatorScenario", "CellpathCore", "SystemSupport",
                "HTTPServer", "CellpathCrypto"
            ]),
        .target(
            name: "Simulator",
            dependencies: [
                "SimulatedModems", "SimulatedServices", "SimulatorScenario", "ModemDiscovery",
                "CellpathCore", "CellpathCrypto", "SystemSupport", "HTTPServer", "CShims",
                "GLibRuntime", "CGIO"
            ]),
        // `cellpath serve`: the dev-server compatible backend over the tru.ID REST client.
        .target(
            name: "Server",
            dependencies: [
                "Workflow", "CAMARA", "CellularHTTP", "HTTPServer", "PhoneNumbers", "CellpathCore",
                "SystemSupport", "CellpathCrypto", "COpenSSL"
            ]),
        // The command-line framework: parser, specs, help, output, exit codes, the program runtime.
        // No domain module: commands are declared and implemented above it.
        .target(name: "CommandLineKit", dependencies: ["CellpathCore", "SystemSupport"]),
        // The command tree (every command's spec and help) and the front's own commands (fetch, config).
        .target(
            name: "CellpathCLI",
            dependencies: [
                "CommandLineKit", "CellpathCore", "SystemSupport", "CellularHTTP",
                "Workflow", "Configuration", "ModemDiscovery", "FieldReport"
            ]),
        // The commands of the executables beside the front, a library per group so that tests reach them.
        .target(
            name: "SimCommands",
            dependencies: [
                "CellpathCLI", "CommandLineKit", "CellpathCore", "Simulator",
                "SimulatorScenario", "SystemSupport"
            ]),
        .target(
            name: "NumberCommands", dependencies: ["CellpathCLI", "CommandLineKit", "CellpathCore", "PhoneNumbers"]),
        // The modem commands' implementations: `cellpath-modem` runs them, the checks take their path from them.
        .target(
            name: "ModemCommands",
            dependencies: [
                "CellpathCLI", "CommandLineKit", "CellpathCore", "ModemDiscovery",
                "Modems", "ModemManagerBackend", "Bearers", "IPConfiguration",
                "Configuration", "CellularHTTP", "SystemSupport", "CShims"
            ]),
        // The providers' API clients made from their configured profiles: the check commands' and serve's.
        .target(
            name: "ProviderClients",
            dependencies: [
                "CellpathCLI", "CellpathCore", "CAMARA", "CellpathCrypto", "CellularHTTP", "Configuration",
                "SystemSupport",
                "Workflow"
            ]),
        .target(
            name: "CheckCommands",
            dependencies: [
                "CellpathCLI", "CommandLineKit", "CellpathCore", "ModemCommands", "Bearers",
                "ModemDiscovery", "PhoneNumbers", "Workflow", "CAMARA", "CellularHTTP",
                "Configuration", "ProviderClients", "FieldReport", "SystemSupport"
            ]),
        .target(
            name: "ServeCommands",
            dependencies: [
                "CellpathCLI", "CommandLineKit", "CellpathCore", "Server", "Workflow",
                "CellularHTTP", "Configuration", "ProviderClients"
            ]),
        // What `cellpath-helper` runs: the four libraries above it, in one executable.
        .target(
            name: "HelperCommands",
            dependencies: ["CommandLineKit", "SimCommands", "NumberCommands", "CheckCommands", "ServeCommands"]),
        .executableTarget(
            name: "cellpath", dependencies: ["CellpathCLI", "CellpathCore", "SystemSupport"],
            linkerSettings: frontReleaseLinking),
        .executableTarget(
            name: "cellpath-modem", dependencies: ["CellpathCLI", "CellpathCore", "ModemCommands", "SystemSupport"],
            linkerSettings: modemReleaseLinking),
        .executableTarget(
            name: "cellpath-helper", dependencies: ["CellpathCLI", "CellpathCore", "HelperCommands", "SystemSupport"]),

        // MARK: Tests
        // Runs one fetch with knobs the CLI does not offer (a forced source address, a timed cancel).
        .executableTarget(
            name: "cellpath-fetch-probe", dependencies: ["CellularHTTP", "Workflow", "SystemSupport"],
            path: "Tests/FetchProbe"),
        // Runs CAMARA Number Verification with its device leg through an interface of a simulated world.
        .executableTarget(
            name: "cellpath-camara-probe",
            dependencies: ["CAMARA", "CellularHTTP", "CellpathCore", "CellpathCrypto", "SystemSupport"],
            path: "Tests/CAMARAProbe"),
        // Applies and undoes a bearer's addressing in the namespace it runs in (`ip netns exec`).
        .executableTarget(
            name: "cellpath-ipconfig-probe", dependencies: ["IPConfiguration", "CellpathCore"],
            path: "Tests/IPConfigProbe"),
        .target(
            name: "TestSupport",
            dependencies: [
                "CellpathCore", "SystemSupport", "Simulator", "SimulatorScenario", "SimulatedModems",
                "ModemDiscovery"
            ], path: "Tests/TestSupport"),
        .testTarget(name: "CellpathCoreTests", dependencies: ["CellpathCore"]),
        .testTarget(name: "CommandLineKitTests", dependencies: ["CommandLineKit", "CellpathCore", "SystemSupport"]),
        .testTarget(
            name: "CellpathCLITests",
            dependencies: [
                "CellpathCLI", "CommandLineKit", "SystemSupport",
                "TestSupport"
            ]),
        .testTarget(
            name: "ModemCommandsTests",
            dependencies: [
                "ModemCommands", "CellpathCLI", "CommandLineKit", "CellpathCore",
                "ModemDiscovery", "Bearers", "SystemSupport"
            ]),
        .testTarget(
            name: "CheckCommandsTests",
            dependencies: [
                "CheckCommands", "CellpathCLI", "CommandLineKit", "CellpathCore",
                "Workflow", "SystemSupport", "TestSupport"
            ]),
        // Every command of the tree implemented once, by the executable its spec places it in.
        .testTarget(
            name: "CommandImplementationTests",
            dependencies: [
                "CellpathCLI", "CommandLineKit", "ModemCommands", "HelperCommands"
            ]),
        .testTarget(name: "EndToEndTests", dependencies: ["SystemSupport", "TestSupport"]),
        .testTarget(name: "SystemSupportTests", dependencies: ["SystemSupport", "TestSupport"]),
        .testTarget(name: "PhoneNumbersTests", dependencies: ["PhoneNumbers"]),
        .testTarget(name: "FieldReportTests", dependencies: ["FieldReport", "CellpathCore", "TestSupport"]),
        .testTarget(name: "ConfigurationTests", dependencies: ["Configuration", "SystemSupport", "TestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "CShims", "SystemSupport", "TestSupport"]),
        .testTarget(
            name: "CellularHTTPTests", dependencies: ["CellularHTTP", "Workflow", "SystemSupport", "TestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "WorkflowTests",
            dependencies: [
                "Workflow", "CAMARA", "CellularHTTP", "CellpathCore", "CellpathCrypto", "SimulatedServices",
                "SimulatorScenario", "HTTPServer", "SystemSupport", "TestSupport"
            ]),
        .testTarget(name: "IPConfigurationTests", dependencies: ["TestSupport", "CellpathCore"]),
        .testTarget(name: "GLibRuntimeTests", dependencies: ["GLibRuntime", "CGIO"]),
        .testTarget(
            name: "ModemsTests",
            dependencies: [
                "Modems", "ModemDiscovery", "GLibRuntime", "CellpathCore", "CMBIM", "CQMI", "SimulatedModems",
                "SimulatorScenario", "TestSupport"
            ]),
        .testTarget(
            name: "ModemManagerBackendTests",
            dependencies: ["ModemManagerBackend", "GLibRuntime", "CellpathCore", "CModemManager"]),
        .testTarget(
            name: "BearersTests",
            dependencies: [
                "Bearers", "TestSupport", "SimulatedModems", "SimulatorScenario", "CellpathCore", "SystemSupport"
            ]),
        .testTarget(
            name: "ModemDiscoveryTests",
            dependencies: [
                "ModemDiscovery", "SimulatedModems", "SimulatorScenario", "SystemSupport",
                "TestSupport"
            ]),
        .testTarget(name: "SimulatorScenarioTests", dependencies: ["SimulatorScenario", "CellpathCore"]),
        .testTarget(
            name: "SimulatedModemsTests",
            dependencies: [
                "SimulatedModems", "SimulatorScenario", "CellpathCore",
                "SystemSupport", "TestSupport"
            ]),
        .testTarget(
            name: "SimulatedServicesTests",
            dependencies: [
                "SimulatedServices", "Simulator", "SimulatorScenario", "HTTPServer", "CShims", "TestSupport",
                "CellpathCrypto", "COpenSSL"
            ]),
        .testTarget(
            name: "SimulatorTests",
            dependencies: ["Simulator", "SimulatorScenario", "CShims", "TestSupport", "HTTPServer"]),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "Server", "Workflow", "HTTPServer", "SimulatorScenario", "SimulatedServices", "CellpathCore",
                "PhoneNumbers",
                "CellpathCrypto", "TestSupport"
            ]),
        .testTarget(
            name: "SimulatorEndToEndTests",
            dependencies: ["Simulator", "SimulatorScenario", "CellpathCore", "TestSupport"])
    ],
    swiftLanguageModes: [.v6]
)

// MARK: Fuzzing (docs/fuzzing.md)
// Only with CELLPATH_FUZZ=1: `make fuzz` builds these in .build/fuzz with AddressSanitizer and
// libFuzzer's coverage; a plain `swift build` never sees them (they need libFuzzer to link).
if Context.environment["CELLPATH_FUZZ"] == "1" {
    package.products.append(.executable(name: "cellpath-fuzz", targets: ["cellpath-fuzz"]))
    package.targets += [
        // libcurl, libphonenumber, libmbim and libqmi called directly: the independent side of each differential check.
        .target(
            name: "FuzzOracles", dependencies: ["CCurl", "CFuzzPhoneNumber", "CMBIM", "CQMI"], path: "Fuzz/FuzzOracles",
            linkerSettings: [.linkedLibrary("curl")]),
        .target(
            name: "CFuzzPhoneNumber", path: "Fuzz/CFuzzPhoneNumber",
            linkerSettings: [.linkedLibrary("phonenumber"), .linkedLibrary("protobuf")]),
        .executableTarget(
            name: "cellpath-fuzz",
            dependencies: [
                "FuzzOracles", "CellpathCore", "CellularHTTP", "Workflow", "PhoneNumbers", "Modems",
                "SimulatedModems", "SimulatorScenario", "SimulatedServices", "Configuration", "Server", "HTTPServer"
            ],
            path: "Fuzz/cellpath-fuzz")
    ]
}
