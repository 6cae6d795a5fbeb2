// swift-tools-version:6.0
// Appex benchmarks: a separate package so `make test` never builds them.
// Each harness measures Appex side by side with its floor and peers in one run and prints ratios.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its directory, which differs between clones.
let appex = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "AppexBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        .executableTarget(
            name: "activation-bench",
            dependencies: [
                .product(name: "AppexActivation", package: appex),
                .product(name: "AppexBundle", package: appex),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                "BenchSupport",
            ]
        ),
        .executableTarget(
            name: "launch-bench",
            dependencies: [
                .product(name: "AppexSandbox", package: appex),
                .product(name: "AppexStateDirectory", package: appex),
                .product(name: "AppexPolicy", package: appex),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                "BenchSupport",
            ]
        ),
        .executableTarget(
            name: "supervisor-bench",
            dependencies: [
                .product(name: "AppexSupervisor", package: appex),
                .product(name: "AppexHostClient", package: appex),
                .product(name: "AppexWire", package: appex),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                "BenchSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "policy-bench",
            dependencies: [
                .product(name: "AppexPolicy", package: appex),
                .product(name: "AppexSandbox", package: appex),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                "BenchSupport",
            ]
        ),
        // appexd with many live idle extensions: scrape time, memory, idle CPU, launch cost.
        .executableTarget(
            name: "metrics-bench",
            dependencies: [
                .product(name: "AppexHostClient", package: appex),
                .product(name: "AppexWire", package: appex),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                "BenchSupport",
            ]
        ),
        // Threshold crossed → victim dead, Appex beside earlyoom (Docs/jetsam.md, "Benchmark").
        .executableTarget(
            name: "jetsam-bench",
            dependencies: [
                .product(name: "AppexHostClient", package: appex),
                .product(name: "AppexWire", package: appex),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                "BenchSupport",
                "CDeathWatch",
            ]
        ),
        .target(name: "CDeathWatch"),
        // appexd under load and faults: 64 hosts, misbehaving extensions, a stranger uid
        // holding connections (Docs/performance.md, "Load and faults").
        .executableTarget(
            name: "load-bench",
            dependencies: [
                .product(name: "AppexHostClient", package: appex),
                .product(name: "AppexWire", package: appex),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                "BenchSupport",
                "CThreadCredentials",
            ]
        ),
        // A thread's own effective uid (raw setresuid), for load-bench's host connections.
        .target(name: "CThreadCredentials"),
        // One earlyoom trial, confined to a PID namespace with its bloater; grow.c and grow.h
        // are symlinks to the probe extension's, so both sides run the same load.
        .executableTarget(name: "earlyoom-trial"),
        // jetsam-bench's PSI row: memory stall confined to one cgroup (read-and-drop over a
        // nearly full memory limit).
        .executableTarget(name: "psi-thrash"),
        .target(name: "BenchSupport", dependencies: [.product(name: "Histogram", package: "hdrhistogram-swift")]),
        // The warm round trip's floor: three plain C processes relaying over Unix sockets.
        .executableTarget(name: "relay-floor"),
    ]
)
