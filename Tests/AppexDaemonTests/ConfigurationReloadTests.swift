import Foundation
import Testing

@testable import AppexDaemon

/// What a reload takes from a changed file: the live keys now, the start-only keys never
/// (named as needing a restart), and nothing the command line set.
@Suite struct ConfigurationReloadTests {
    static let old = """
        hosts: [1000]
        admins: [0]
        socket: /run/appex/appexd.sock
        memoryBudget: 512MiB
        logLevel: info
        """

    @Test func liveKeysApplyAndStartOnlyKeysWaitForARestart() throws {
        let old = try DaemonConfiguration.parse(Self.old, file: "a.yaml")
        let new = try DaemonConfiguration.parse(
            """
            hosts: [1000, 1001]
            admins: [0]
            socket: /run/appex/other.sock
            memoryBudget: 256MiB
            logLevel: debug
            clients:
              connections: 8
            """, file: "a.yaml")
        let r = ConfigurationReload(from: old, to: new)
        #expect(r.applied == ["hosts", "clients", "logLevel"])
        #expect(r.needsRestart == ["socket", "memoryBudget"])
        #expect(r.inForce.hosts == [1000, 1001] && r.inForce.clients.connections == 8 && r.inForce.logLevel == "debug")
        #expect(r.inForce.socketPath == "/run/appex/appexd.sock" && r.inForce.memoryBudget == .mebibytes(512))
    }

    @Test func keysTheCommandLineSetsAreLeftAlone() throws {
        let old = try DaemonConfiguration.parse(Self.old, file: "a.yaml")
        let new = try DaemonConfiguration.parse(
            Self.old.replacingOccurrences(of: "appexd.sock", with: "b.sock").replacingOccurrences(of: "info", with: "error"),
            file: "a.yaml")
        let r = ConfigurationReload(from: old, to: new, overridden: ["socket", "logLevel"])
        #expect(r.applied.isEmpty && r.needsRestart.isEmpty)
    }

    @Test func anUnchangedFileChangesNothing() throws {
        let old = try DaemonConfiguration.parse(Self.old, file: "a.yaml")
        let r = ConfigurationReload(from: old, to: old)
        #expect(r.applied.isEmpty && r.needsRestart.isEmpty && r.inForce == old)
    }

    @Test func aLogLevelMustBeOneSwiftLogKnows() throws {
        let error = #expect(throws: Error.self) { try DaemonConfiguration.parse("logLevel: loud\n", file: "a.yaml") }
        #expect("\(error!)".contains("a.yaml:1"), "\(error!)")
    }
}
