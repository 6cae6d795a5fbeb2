// swift-tools-version:6.0
// Start-up cost of an extension built on AppexExtensionKit: time from spawn to the Hello
// frame arriving, for a minimal extension importing nothing else, FoundationEssentials or
// Foundation. The harness and the C floor (harness/) are built with cc, without the Swift
// runtime. Run it all with scripts/measure-sdk-startup.sh (Docs/sdk.md).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its directory, which differs between clones.
let appex = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "SDKStartup",
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(name: "startup-swift-floor"),
        .executableTarget(name: "startup-sdk", dependencies: [.product(name: "AppexExtensionKit", package: appex)]),
        .executableTarget(name: "startup-foundation-essentials", dependencies: [.product(name: "AppexExtensionKit", package: appex)]),
        .executableTarget(name: "startup-foundation", dependencies: [.product(name: "AppexExtensionKit", package: appex)]),
    ]
)
