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

    /// Connects, runs `body`, prints the extensions it returns.
    func run(_ body: (HostClient) async throws -> [ExtensionInfo]) async throws {
        do {
            let client = try HostClient.connect(socketPath: socket, identifier: "appex-cli")
            defer { client.close() }
            let extensions = try await body(client)
            if json {
                try JSONOutput.print(extensions.map(Self.json))
            } else {
                for e in extensions { print(Self.line(e)) }
            }
        } catch let e as HostClientError {
            var lines = ["appex: \(e.reason.map { "\($0): " } ?? "")\(e.message)"]
            lines += e.details.map { "  \($0)" }
            FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            throw ExitCode(1)
        }
    }

    static func json(_ e: ExtensionInfo) -> [String: Any] {
        ["bundleIdentifier": e.bundleIdentifier, "extensionPoint": e.extensionPoint, "enabled": e.enabled,
         "displayName": e.displayName.jsonOrNull, "version": e.version.jsonOrNull,
         "containingApp": e.containingApp.jsonOrNull]
    }

    static func line(_ e: ExtensionInfo) -> String {
        let state = e.enabled ? "enabled " : "disabled"
        let point = e.extensionPoint.isEmpty ? "" : "  \(e.extensionPoint)"
        let app = e.containingApp.map { "  (in \($0))" } ?? ""
        return "\(state)  \(e.bundleIdentifier)\(point)\(app)"
    }
}

struct InstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install a containing app or a bare .appex into appexd (validated, copied; starts disabled).")
    @Argument(help: "The bundle, as appexd sees the path.") var path: String
    @OptionGroup var daemon: DaemonOptions

    func run() async throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        try await daemon.run { try await $0.install(path: absolute) }
    }
}

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the extensions appexd has installed.")
    @OptionGroup var daemon: DaemonOptions
    func run() async throws { try await daemon.run { try await $0.list() } }
}

struct EnableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "enable", abstract: "Enable an installed extension.")
    @Argument var bundleIdentifier: String
    @OptionGroup var daemon: DaemonOptions
    func run() async throws { try await daemon.run { try await $0.enable(bundleIdentifier) } }
}

struct DisableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "disable", abstract: "Disable an extension; its running instances terminate.")
    @Argument var bundleIdentifier: String
    @OptionGroup var daemon: DaemonOptions
    func run() async throws { try await daemon.run { try await $0.disable(bundleIdentifier) } }
}

struct UninstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Uninstall an extension (or every extension of a containing app).")
    @Argument var bundleIdentifier: String
    @Flag(help: "Also remove the extension's data container, and the app groups the uninstall releases.") var removeData = false
    @OptionGroup var daemon: DaemonOptions
    func run() async throws { try await daemon.run { try await $0.uninstall(bundleIdentifier, removeData: removeData) } }
}
