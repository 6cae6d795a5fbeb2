import AppexCommandSupport
import AppexHostClient
import AppexWire
import ArgumentParser
import Foundation

/// Options shared by the commands that talk to appexd.
struct DaemonOptions: ParsableArguments {
    @Option(help: "appexd's control socket (default $APPEX_SOCKET, else /run/appex/appexd.sock).")
    var socket: String?

    @Flag(help: "JSON output.")
    var json = false

    /// Connects and runs `body`. What goes wrong (no appexd, a refusal) reaches AppexMain,
    /// which says it in words with its exit status.
    /// `identifier`: what Hello names (a containing app's, to act as its host).
    func connected<T>(as identifier: String = "appex-cli", _ body: (HostClient) async throws -> T) async throws -> T {
        let client = try HostClient.connect(socketPath: socket, identifier: identifier)
        defer { client.close() }
        return try await body(client)
    }

    /// Runs `body` and prints the extensions it returns: JSON, or one line each made by `line`.
    func run(_ body: (HostClient) async throws -> [ExtensionInfo], line: (ExtensionInfo) -> String) async throws {
        let extensions = try await connected(body)
        if json {
            try JSONOutput.print(extensions.map(Self.json))
        } else {
            for e in extensions { print(line(e)) }
        }
    }

    static func json(_ e: ExtensionInfo) -> [String: Any] {
        [
            "bundleIdentifier": e.bundleIdentifier, "extensionPoint": e.extensionPoint, "enabled": e.enabled,
            "displayName": e.displayName.jsonOrNull, "version": e.version.jsonOrNull,
            "containingApp": e.containingApp.jsonOrNull,
        ]
    }

    /// `appex list`: a header and aligned columns, or a line saying nothing is installed.
    static func table(_ extensions: [ExtensionInfo]) -> [String] {
        guard !extensions.isEmpty else { return ["no extensions installed (appex install PATH installs one)"] }
        let rows = extensions.map { e in
            [
                e.bundleIdentifier, e.enabled ? "enabled" : "disabled", e.extensionPoint.isEmpty ? "-" : e.extensionPoint,
                e.version ?? "-", e.containingApp ?? "-",
            ]
        }
        return TextTable.render(
            headers: ["EXTENSION", "STATE", "EXTENSION POINT", "VERSION", "CONTAINING APP"],
            rows: rows, indent: "", textColumns: true)
    }
}

struct InstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install a containing app or an .appex into appexd.",
        discussion: "Install a containing app or a bare .appex into appexd (validated, copied; starts disabled).")
    @Argument(help: "The bundle, as appexd sees the path.") var path: String
    @OptionGroup var daemon: DaemonOptions

    func run() async throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        try await daemon.run({ try await $0.install(path: absolute) }) { e in
            "installed \(e.bundleIdentifier)" + (e.enabled ? " (enabled)" : " (disabled until appex enable \(e.bundleIdentifier))")
        }
    }
}

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the extensions appexd has installed.")
    @OptionGroup var daemon: DaemonOptions
    func run() async throws {
        let extensions = try await daemon.connected { try await $0.list() }
        if daemon.json {
            try JSONOutput.print(extensions.map(DaemonOptions.json))
        } else {
            DaemonOptions.table(extensions).forEach { print($0) }
        }
    }
}

struct EnableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "enable", abstract: "Enable an installed extension.")
    @Argument(help: "The extension's bundle identifier.") var bundleIdentifier: String
    @OptionGroup var daemon: DaemonOptions
    func run() async throws { try await daemon.run({ try await $0.enable(bundleIdentifier) }) { "enabled \($0.bundleIdentifier)" } }
}

struct DisableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "disable", abstract: "Disable an extension; its running instances end.")
    @Argument(help: "The extension's bundle identifier.") var bundleIdentifier: String
    @OptionGroup var daemon: DaemonOptions
    func run() async throws { try await daemon.run({ try await $0.disable(bundleIdentifier) }) { "disabled \($0.bundleIdentifier)" } }
}

struct UninstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Uninstall an extension, or a containing app's.")
    @Argument(help: "An extension's bundle identifier, or a containing app's.") var bundleIdentifier: String
    @Flag(help: "Also remove the extension's data container, and the app groups the uninstall releases.") var removeData = false
    @OptionGroup var daemon: DaemonOptions
    func run() async throws {
        try await daemon.run({ try await $0.uninstall(bundleIdentifier, removeData: removeData) }) { e in
            "uninstalled \(e.bundleIdentifier)" + (removeData ? " and its data" : "")
        }
    }
}
