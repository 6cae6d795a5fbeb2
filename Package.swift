// swift-tools-version:6.0
// Appex: the iOS/macOS app-extension model on Linux. See Docs/architecture.md.
import PackageDescription

/// The order in which a release `appex` is linked: the symbols an `appex run` touches, first.
let linkOrder = Context.packageDirectory + "/BuildSupport/appex-link-order.txt"

/// The C extensions, linked by swiftc without the Swift runtime it adds: no swiftrt.o (whose
/// constructor calls into the runtime), and the runtime named as an archive nothing references,
/// so no member of it is linked. They then start where no Swift toolchain is installed.
let cExtensionLinking: [LinkerSetting] = [.unsafeFlags(["-nostartfiles", "-static-stdlib"])]

let package = Package(
    name: "Appex",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "appex", targets: ["appex"]),
        .executable(name: "appex-commands", targets: ["appex-commands"]),
        .executable(name: "appexd", targets: ["appexd"]),
        .library(name: "AppexBundle", targets: ["AppexBundle"]),
        .library(name: "AppexPolicy", targets: ["AppexPolicy"]),
        .library(name: "AppexActivation", targets: ["AppexActivation"]),
        .library(name: "AppexStateDirectory", targets: ["AppexStateDirectory"]),
        .library(name: "AppexSandbox", targets: ["AppexSandbox"]),
        .library(name: "AppexWire", targets: ["AppexWire", "AppexWireIO"]),
        .library(name: "AppexRegistry", targets: ["AppexRegistry"]),
        .library(name: "AppexSupervisor", targets: ["AppexSupervisor"]),
        .library(name: "AppexHostClient", targets: ["AppexHostClient"]),
        .library(name: "AppexDaemon", targets: ["AppexDaemon"]),
        .library(name: "AppexExtensionKit", targets: ["AppexExtensionKit"]),
        .library(name: "AppexExtensionUnavailable", targets: ["AppexExtensionUnavailable"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // The progress bar of `appex profile` (ConsoleKitTerminal only).
        .package(url: "https://github.com/vapor/console-kit", from: "4.16.0"),
        // Metrics (Docs/metrics.md): the swift-metrics API in the supervisor, the Prometheus
        // backend and NIO's HTTP/1 server in appexd.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        // Background transfers (Docs/transfers.md): only the worker, appex-transfer, links it.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
    ],
    targets: [
        // libseccomp, found with pkg-config; `make` installs libseccomp-dev when missing.
        .systemLibrary(
            name: "CSeccomp",
            pkgConfig: "libseccomp",
            providers: [.apt(["libseccomp-dev"])]
        ),
        // The only code that runs between fork and exec: C, async-signal-safe.
        .target(name: "CAppexLauncher"),
        // Thin C wrappers for the Linux calls Swift cannot reach (syscall numbers, macros,
        // variadic calls, packed or awkward structs): epoll, eventfd, timerfd, openat2,
        // pidfds, accept4, setfsuid, the transfer worker's identity drop, threads placed on
        // another CPU.
        .target(name: "CAppexLinux"),

        // The bounds-checked, fuzzed ELF reader (program headers, dynamic section, imports,
        // RUNPATH) the sandbox, bundle validation and `appex lint-binary` share. No Foundation.
        .target(name: "AppexELF"),
        // Bundles, Info.plist model, entitlements and validation.
        .target(name: "AppexBundle", dependencies: ["AppexELF"]),
        // The version every executable's --version prints (kept equal to VERSION by a test).
        .target(name: "AppexVersion"),
        // What an installation relies on: every executable's --version, the systemd unit.
        .testTarget(
            name: "AppexPackagingTests",
            dependencies: ["AppexVersion", "AppexTestSupport", "appex", "appex-commands", "appexd", "appex-sandbox-init"]),
        // Extension-point policies and syscall groups: the model, effective-policy resolution,
        // the compiled cache and the locator, with no Foundation (`appex run` links it) ...
        .target(name: "AppexPolicyCore", dependencies: ["AppexBundle", "CSeccomp"]),
        // ... and reading the YAML files (Yams, which needs Foundation). Re-exports the core.
        .target(
            name: "AppexPolicy",
            dependencies: ["AppexPolicyCore", .product(name: "Yams", package: "Yams")]
        ),
        // The extension-safe API check (Docs/extension-safe-api.md): the lint of an executable's
        // imports (read by AppexELF) against its policy. No Foundation.
        .target(name: "AppexBinaryLint", dependencies: ["AppexBundle", "AppexELF", "AppexPolicy"]),
        // UTIs, the NSPredicate subset, dictionary activation rules.
        .target(name: "AppexActivation", dependencies: ["AppexBundle"]),
        // Thin Swift wrappers over system calls, throwing swift-system's Errno with the
        // operation and path, in each caller's error type (SystemCalls<Failure>).
        .target(
            name: "AppexSystem",
            dependencies: ["CAppexLinux", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // cgroup v1 and v2 backends behind one interface.
        .target(
            name: "AppexCgroups",
            dependencies: ["AppexSystem", "CAppexLinux", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // The state directory's layout: extensions' containers and app-group directories, the
        // uid table, removing a tree an extension made; below both the sandbox and the registry.
        // CAppexLinux: openat2, which Swift's Glibc does not import.
        .target(
            name: "AppexStateDirectory",
            dependencies: ["AppexBundle", "AppexSystem", "CAppexLinux", .product(name: "SystemPackage", package: "swift-system")]
        ),
        .testTarget(name: "AppexStateDirectoryTests", dependencies: ["AppexStateDirectory", "AppexTestSupport"]),
        // Seccomp compilation, the launcher driver, `run` orchestration.
        .target(
            name: "AppexSandbox",
            dependencies: [
                "AppexBundle", "AppexELF", "AppexKillReason", "AppexPolicyCore", "AppexStateDirectory", "AppexCgroups", "AppexSystem", "CSeccomp",
                "CAppexLauncher", "CAppexLinux",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Why an extension instance ended: one enum from `appex run`'s report through the
        // supervisor, the wire, the history and the metrics to policy tests. No dependencies.
        .target(name: "AppexKillReason"),
        // The wire protocol (Docs/protocol.md): messages, framing, codec, connection state; pure,
        // no Foundation. AppexWireIO: its Unix-socket transport (SCM_RIGHTS, SO_PEERCRED).
        .target(name: "AppexWire", dependencies: ["AppexKillReason"]),
        .target(name: "AppexWireIO", dependencies: ["AppexWire"]),
        // appexd's listening socket (bind, listen, accept4) and what each client may hold there:
        // only the supervisor and appexd's configuration link it.
        .target(name: "AppexWireListener", dependencies: ["AppexWireIO", "CAppexLinux"]),
        // `appex run` from a command line: the request, its preparation and its report, with no
        // Foundation, shared by the `appex` front and the full tool.
        .target(name: "AppexRun", dependencies: ["AppexBundle", "AppexKillReason", "AppexPolicyCore", "AppexSandbox", "AppexStateDirectory"]),
        // `appex`: runs `appex run` itself and hands every other command line to appex-commands.
        // It links no Foundation, argument-parser, Yams or SQLite (Docs/launch-sequence.md,
        // "A run without Foundation").
        .executableTarget(
            name: "appex",
            dependencies: ["AppexRun", "AppexPolicyCore", "AppexSandbox", "CAppexLinux"],
            // A release appex is one static executable (Swift runtime, libseccomp, glibc): no
            // dynamic loader, so 0.6 ms from exec to main instead of 3.5 ms
            // (Docs/launch-sequence.md, "Start-up"). -static-stdlib when compiling too, so a
            // plain `swift build -c release` links as well as one with --static-swift-stdlib.
            // lld with BuildSupport/appex-link-order.txt puts the code and data an `appex run`
            // touches next to each other, so it starts with about half the page faults
            // (BuildSupport/make-link-order.sh; Docs/launch-sequence.md, "Laid out for the run").
            swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-static-executable",
                        "-use-ld=lld", "-Xlinker", "--symbol-ordering-file=\(linkOrder)",
                        "-Xlinker", "--no-warn-symbol-ordering",
                    ], .when(configuration: .release))
            ]
        ),
        // What the command line's libraries share with it: JSON and table output, error text.
        .target(name: "AppexCommandSupport"),
        // `appex test-policy`'s engine (Docs/policy-tests.md): test files read and checked, cases
        // planned and run under the real sandbox or an embedded supervisor, verdicts, reports.
        .target(
            name: "AppexPolicyTesting",
            dependencies: [
                "AppexCommandSupport", "AppexPolicy", "AppexSandbox", "AppexStateDirectory", "AppexCgroups", "AppexSupervisor", "AppexWire",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "AppexPolicyTestingTests", dependencies: ["AppexPolicyTesting", "AppexKillReason", "AppexPolicy", "AppexTestSupport"]),
        // What `appex profile` and `appex report` make of launch timings: percentiles, the
        // history read from the registry, the fleet summary, text, JSON and HTML with SVG plots.
        .target(name: "AppexLaunchReport", dependencies: ["AppexCommandSupport", "AppexBundle", "AppexPolicy", "AppexRegistry"]),
        .testTarget(
            name: "AppexLaunchReportTests",
            dependencies: ["AppexLaunchReport", "AppexKillReason", "AppexCommandSupport", "AppexRegistry", "AppexTestSupport"]),
        // The full tool: every command, with argument-parser (`appex --help` is its help).
        .executableTarget(
            name: "appex-commands",
            dependencies: [
                "AppexRun", "AppexKillReason", "AppexBundle", "AppexPolicy", "AppexActivation", "AppexSandbox", "AppexStateDirectory",
                "AppexSupervisor", "AppexHostClient",
                "AppexCommandSupport", "AppexPolicyTesting", "AppexLaunchReport",
                "AppexBinaryLint", "AppexWire", "AppexCgroups", "AppexRegistry", "AppexVersion",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ConsoleKitTerminal", package: "console-kit"),
                // appex top: SIGINT/SIGTERM/SIGHUP end it with the terminal restored, SIGWINCH redraws.
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            // Static in release too (Foundation, SQLite and all): `appex validate` and the
            // others start without the dynamic loader's ~3 ms.
            swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-static-executable"], .when(configuration: .release))]
        ),

        // Shipped example extensions (their bundles live in Examples/).
        .executableTarget(name: "AppexExampleBalloon"),
        .executableTarget(name: "appex-probe"),
        // pid 1 and holder of an extension's namespaces, exec'd inside the view: static, and with
        // no C library at all (its own _start and system calls), so the file is a few KB.
        // SwiftPM links every executable through swiftc: -static-executable gives a static
        // link, -nostartfiles leaves out swiftrt.o (which would pull in the whole Swift
        // runtime, 9.5 MB), and clang's -nostdlib leaves out crt1.o and libc. The Swift
        // libraries the static link still names are archives nothing references, so no
        // member of them is linked. Docs/launch-sequence.md, "The sandbox init".
        .executableTarget(
            name: "appex-sandbox-init",
            cSettings: [.unsafeFlags(["-ffreestanding", "-fno-stack-protector"])],
            linkerSettings: [.unsafeFlags(["-static-executable", "-nostartfiles", "-Xclang-linker", "-nostdlib"])]
        ),

        // Where tests find Tests/Fixtures and the optional real-world corpus (APPEX_CORPUS).
        .target(name: "AppexTestSupport", dependencies: ["AppexWire", "AppexWireIO"], path: "Tests/AppexTestSupport"),
        .testTarget(name: "AppexTestSupportTests", dependencies: ["AppexTestSupport"]),
        .testTarget(name: "AppexBundleTests", dependencies: ["AppexBundle", "AppexELF", "AppexTestSupport"]),
        .testTarget(name: "AppexPolicyTests", dependencies: ["AppexPolicy", "AppexPolicyCore", "AppexTestSupport"]),
        // Also the extension-unavailable markers: it compiles against AppexHostClient's sources.
        .testTarget(
            name: "AppexBinaryLintTests",
            dependencies: ["AppexBinaryLint", "AppexELF", "AppexPolicy", "AppexTestSupport", "AppexHostClient", "AppexExtensionUnavailable"]
        ),
        .testTarget(
            name: "AppexActivationTests",
            dependencies: [
                "AppexActivation", "AppexBundle", "AppexTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "AppexCgroupsTests", dependencies: ["AppexCgroups"]),
        .testTarget(
            name: "AppexSandboxTests", dependencies: ["AppexSandbox", "AppexStateDirectory", "AppexPolicy", "AppexCgroups", "AppexTestSupport"]),
        .testTarget(name: "AppexWireTests", dependencies: ["AppexKillReason", "AppexWire", "AppexWireIO", "AppexWireListener", "AppexTestSupport"]),
        .testTarget(
            name: "AppexCLITests",
            dependencies: [
                "appex", "appex-commands", "appex-example-c", "appex-example-lib", "AppexExampleShare", "AppexRun", "AppexBinaryLint", "AppexELF",
                "AppexCgroups", "AppexPolicy", "AppexSandbox", "AppexTestSupport",
            ]),

        // The extension registry: installed copies under <state>/bundles, rows in SQLite (GRDB).
        .target(
            name: "AppexRegistry",
            // CAppexLinux: the per-thread file-system identity an install reads its source with.
            dependencies: [
                "AppexBundle", "AppexKillReason", "AppexSandbox", "AppexStateDirectory", "CAppexLinux", .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Installs and toggles extensions in a loop until SIGKILLed, for the registry's crash test.
        .executableTarget(name: "appex-registry-crash-helper", dependencies: ["AppexRegistry"]),
        .testTarget(
            name: "AppexRegistryTests",
            dependencies: [
                "AppexRegistry", "AppexKillReason", "AppexStateDirectory", "appex-registry-crash-helper", "AppexTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),

        // The supervisor core (Docs/architecture.md): catalog, admission, the life cycle of
        // each instance (launch deadline, request timeout, liveness, warm reuse, idle exit)
        // on one event loop over ExtensionSandbox. appexd, `appex request --bundle` and the
        // tests embed it.
        .target(
            name: "AppexSupervisor",
            dependencies: [
                "AppexBundle", "AppexKillReason", "AppexPolicy", "AppexActivation", "AppexSandbox", "AppexStateDirectory", "AppexCgroups",
                "AppexRegistry",
                "AppexWire", "AppexWireIO", "AppexWireListener", "CAppexLauncher", "CAppexLinux", "AppexTransferPlan",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "AppexSupervisorTests",
            dependencies: [
                "AppexSupervisor", "AppexWire", "AppexCgroups", "AppexRegistry", "AppexTestSupport", "AppexTransferPlan",
                "appex-probe-extension",
            ]
        ),
        // appexd's pieces beside the supervisor (h-host). AppexHostClient: what a host links to
        // talk to appexd over the control socket; no Foundation (the appex CLI links it and
        // must start fast). AppexDaemon: the configuration file and sd_notify.
        .target(name: "AppexHostClient", dependencies: ["AppexWire", "AppexWireIO"]),
        .testTarget(
            name: "AppexHostClientTests", dependencies: ["AppexHostClient", "AppexWire", "AppexWireIO", "AppexWireListener", "AppexTestSupport"]),
        .target(
            name: "AppexDaemon",
            dependencies: [
                "AppexPolicy", "AppexSystem", "AppexWire", "AppexWireIO", "AppexWireListener", .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AppexDaemonTests",
            dependencies: [
                "AppexDaemon", "AppexPolicy", "AppexWireIO", "AppexWireListener", "AppexTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // appexd's metrics endpoint (Docs/metrics.md): the Prometheus backend behind
        // swift-metrics, the gauges read at scrape time, and `GET /metrics` on NIO's HTTP/1
        // server, on NIO's own threads, never the supervisor's loop.
        .target(
            name: "AppexMetrics",
            dependencies: [
                "AppexSupervisor", "AppexPolicy", "AppexCgroups", "AppexSystem", "AppexVersion",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AppexMetricsTests",
            dependencies: [
                "AppexMetrics", "AppexSupervisor", "AppexPolicy", "AppexHostClient", "AppexWire", "AppexCgroups", "AppexVersion",
                "appexd", "appex-probe-extension", "AppexTestSupport",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),

        // appexd: configuration, the stale sweep, the supervisor, its control socket, and
        // service lifecycle (SIGTERM/SIGINT) wired together.
        .executableTarget(
            name: "appexd",
            dependencies: [
                "AppexSupervisor", "AppexDaemon", "AppexWire", "AppexSandbox", "AppexStateDirectory", "AppexPolicy", "AppexMetrics", "AppexVersion",
                "AppexRun",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // SIGHUP reloads the configuration.
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The background-transfer worker (Docs/transfers.md): started by appexd per session,
        // as the extension's uid, writing only beneath the group directory it is handed.
        // The only target that links async-http-client, so nothing else waits for it.
        .executableTarget(
            name: "appex-transfer",
            dependencies: [
                "AppexTransferPlan", "CAppexLinux",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // What appexd hands the worker and what the worker reports back: plain lines, no
        // Foundation, shared by both sides.
        .target(name: "AppexTransferPlan"),
        .testTarget(
            name: "AppexdTests",
            dependencies: [
                "appexd", "appex", "appex-probe-extension", "appex-example-lib", "appex-host-c", "appex-lib-test-extension", "appex-transfer",
                "AppexExampleShare", "AppexHostClient", "AppexCgroups", "AppexWire", "AppexWireIO", "CAppexLinux",
                "AppexRegistry", "AppexSupervisor", "AppexTestSupport",
            ]
        ),
        // C extensions, written from Docs/protocol.md with no Appex code: the example
        // (HelloC.appex, executable hello-c) and the probe that misbehaves on instruction
        // (Probe.appex, executable probe; Docs/probe-extension.md). The tests run both as child
        // processes and play appexd.
        .executableTarget(name: "appex-example-c", linkerSettings: cExtensionLinking),
        // libappex (Docs/libappex.md): the protocol for C, both sides, in one header
        // (include/appex.h); `make install` also installs it as libappex.a and libappex.so.
        // HelloLib.appex (hello-lib) is HelloC's twin on it; appex-host-c is a host on it.
        .target(name: "CAppex"),
        .executableTarget(name: "appex-example-lib", dependencies: ["CAppex"], linkerSettings: cExtensionLinking),
        .executableTarget(name: "appex-host-c", dependencies: ["CAppex"], linkerSettings: cExtensionLinking),
        // Sleeps on request, pings answered on libappex's thread or not; only the tests run it.
        .executableTarget(
            name: "appex-lib-test-extension", dependencies: ["CAppex"], path: "Tests/LibAppexTestExtension",
            linkerSettings: cExtensionLinking),
        .executableTarget(name: "appex-probe-extension", linkerSettings: cExtensionLinking),
        .testTarget(
            name: "AppexCExtensionTests",
            dependencies: ["AppexWire", "AppexWireIO", "AppexTestSupport", "appex-example-c", "appex-probe-extension"]
        ),
        // Extension SDK (h-sdk): AppexExtensionKit, the Swift example extensions built on it,
        // and their tests, which run the real executables against a test-played appexd.
        // No Foundation anywhere here: the SDK is on every cold launch's critical path.
        .target(name: "AppexExtensionKit", dependencies: ["AppexWire", "AppexWireIO", "CAppexLinux"]),
        // <appex/extension_unavailable.h>: APPEX_EXTENSION_UNAVAILABLE(msg), the C counterpart
        // of NS_EXTENSION_UNAVAILABLE (Docs/extension-safe-api.md).
        .target(name: "AppexExtensionUnavailable"),
        .executableTarget(name: "AppexExampleShare", dependencies: ["AppexExtensionKit"]),
        .executableTarget(name: "AppexExampleAction", dependencies: ["AppexExtensionKit"]),
        .executableTarget(name: "AppexExampleWidget", dependencies: ["AppexExtensionKit"]),
        // Reports the callbacks it sees through its answers; only the SDK tests run it.
        .executableTarget(
            name: "appex-sdk-test-extension", dependencies: ["AppexExtensionKit"],
            path: "Tests/AppexSDKTestExtension"),
        .testTarget(
            name: "AppexExtensionKitTests",
            dependencies: [
                "AppexWire", "AppexWireIO", "AppexTestSupport",
                "AppexExampleShare", "AppexExampleAction", "AppexExampleWidget", "appex-sdk-test-extension",
            ]
        ),
    ]
)

// Release builds of Appex's own Swift targets, for what a process does before its real work
// (Docs/launch-sequence.md, "Laid out for the run"):
// - each function in its own section, so the link order above moves one function, not a
//   whole file's code;
// - a concrete generic type's metadata (`[String: Int64]`'s storage, say) made by calling its
//   accessor with the conformances the compiler already knows, not from its mangled name:
//   resolving a mangled name asks the runtime for each conformance, and the first answer to
//   each question scans every conformance record of the executable (~7,300 in appex; ~0.3 ms
//   of CPU per `appex run`, on the paths that matter).
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .unsafeFlags(
                [
                    "-Xfrontend", "-function-sections",
                    "-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors",
                ],
                .when(configuration: .release))
        ]
}
