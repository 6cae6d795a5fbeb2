import AppexPolicy
import AppexTestSupport
import AppexWireListener
import Glibc
import Testing

@testable import AppexDaemon

/// A fresh temporary directory for configuration files, removed by `cleanUp`.
struct ConfigurationDirectory {
    let scratch: ScratchDirectory
    var path: String { scratch.path }

    init() throws {
        scratch = try ScratchDirectory("appexd-config")
    }

    func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        let bytes = Array(text.utf8)
        try #require(Glibc.write(fd, bytes, bytes.count) == bytes.count)
        return file
    }

    func cleanUp() { scratch.remove() }
}

@Suite struct DaemonConfigurationTests {
    @Test func everyKeyIsRead() throws {
        let dir = try ConfigurationDirectory()
        let file = try dir.write(
            "appexd.yaml",
            """
            hosts: [1000, "1001", root]
            admins:
              - 2000
            stateDirectory: /srv/appex
            socket: /run/appex-test/control.sock
            shutdownGrace: 1500ms
            memoryBudget: 512MiB
            prebuildSandboxes: true
            killsByBundle: true
            """)
        defer { dir.cleanUp() }
        let c = try DaemonConfiguration.load(path: file, explicit: true)
        #expect(c.hosts == [1000, 1001, 0])
        #expect(c.admins == [2000])
        #expect(c.stateDirectory == "/srv/appex")
        #expect(c.socketPath == "/run/appex-test/control.sock")
        #expect(c.shutdownGrace == .milliseconds(1500))
        #expect(c.memoryBudget == .mebibytes(512))
        #expect(c.prebuildSandboxes)
        #expect(c.killsByBundle)
        #expect(c.file == file)
        #expect(c.mayHost(uid: 1000) && c.mayHost(uid: 1001) && !c.mayHost(uid: 2000))
        #expect(c.mayAdminister(uid: 2000) && !c.mayAdminister(uid: 1000))
    }

    @Test func rootMayAlwaysHostAndAdminister() throws {
        let c = try DaemonConfiguration.parse("hosts: [1000]\nadmins: []\n", file: "appexd.yaml")
        #expect(c.mayHost(uid: 0) && c.mayAdminister(uid: 0))
        #expect(c.mayHost(uid: 1000) && !c.mayAdminister(uid: 1000))
        #expect(!c.mayHost(uid: 1002))
    }

    @Test func aMissingFileAtTheDefaultPathMeansDefaultsButNamedExplicitlyIsAnError() throws {
        let dir = try ConfigurationDirectory()
        defer { dir.cleanUp() }
        let missing = dir.path + "/appexd.yaml"
        let defaults = try DaemonConfiguration.load(path: missing, explicit: false)
        #expect(defaults == DaemonConfiguration())
        #expect(defaults.stateDirectory == "/var/lib/appex")
        #expect(defaults.socketPath == "/run/appex/appexd.sock")
        #expect(defaults.shutdownGrace == .seconds(2))
        #expect(defaults.memoryBudget == nil)
        #expect(defaults.mayHost(uid: 0) && !defaults.mayHost(uid: 1000) && !defaults.mayAdminister(uid: 1000))

        let error = #expect(throws: PolicyError.self) { try DaemonConfiguration.load(path: missing, explicit: true) }
        #expect(error?.file == missing)
        #expect(error?.message.contains("no such file") == true)
    }

    @Test func aFileOfCommentsOnlyMeansDefaults() throws {
        let c = try DaemonConfiguration.parse("# nothing configured yet\n\n", file: "appexd.yaml")
        #expect(c == DaemonConfiguration(file: "appexd.yaml"))
    }

    @Test func aDirectoryIsNotAConfiguration() throws {
        let dir = try ConfigurationDirectory()
        defer { dir.cleanUp() }
        let error = #expect(throws: PolicyError.self) { try DaemonConfiguration.load(path: dir.path, explicit: true) }
        #expect(error?.description == "\(dir.path): cannot read: Is a directory")
    }

    @Test func theShippedExampleLoads() throws {
        let c = try DaemonConfiguration.load(path: Corpus.packageRoot + "/Docs/appexd.yaml", explicit: true)
        #expect(c.hosts == [1000, 0])
        #expect(c.admins == [0])
        #expect(c.socketPath == DaemonConfiguration().socketPath)
        #expect(c.stateDirectory == DaemonConfiguration.defaultStateDirectory)
        #expect(c.memoryBudget == .mebibytes(512))
        #expect(c.budgetHeadroom == .mebibytes(128) && DaemonConfiguration().budgetHeadroom == nil)
        #expect(!c.prebuildSandboxes)
        #expect(!DaemonConfiguration().prebuildSandboxes)
        #expect(!c.killsByBundle && !DaemonConfiguration().killsByBundle)
        #expect(c.clients == ClientLimits(), "the example states the defaults")
        #expect(c.logLevel == "info" && DaemonConfiguration().logLevel == nil)
    }

    @Test func clientLimitsAreReadAndFittedToTheDescriptorLimit() throws {
        let c = try DaemonConfiguration.parse(
            """
            clients:
              helloTimeout: 750ms
              connections: 100
              connectionsPerUser: 4
              requestsPerConnection: 8
              descriptorsPerConnection: 15
            """, file: "appexd.yaml")
        #expect(c.clients.helloTimeout == .milliseconds(750))
        #expect(c.clients.connections == 100 && c.clients.connectionsPerUID == 4)
        #expect(c.clients.requestsPerConnection == 8 && c.clients.descriptorsPerConnection == 15)
        // A quarter of 4,096 descriptors at 16 a connection: 64 connections.
        let fitted = c.clients.fitted(toDescriptorLimit: 4096)
        #expect(fitted.connections == 64 && fitted.connectionsPerUID == 4)
        #expect(c.clients.fitted(toDescriptorLimit: 1_000_000).connections == 100)
        #expect(c.clients.fitted(toDescriptorLimit: 10).connections == 1)
    }

    /// A bad file: its text, and where and what the error must say.
    struct Bad: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var key: String?
        var message: String
        var testDescription: String { message }
    }

    static let bad: [Bad] = [
        Bad(text: "hosts: [0]\nsockets: /run/x.sock\n", line: 2, key: "sockets", message: "unknown key \"sockets\""),
        Bad(text: "hosts: 1000\n", line: 1, key: "hosts", message: "expected a list, found a scalar"),
        Bad(
            text: "admins: [0]\nhosts:\n  - 1000\n  - appex-no-such-user-7f3a\n", line: 4, key: "hosts[1]",
            message: "no user named \"appex-no-such-user-7f3a\" on this machine"),
        Bad(text: "hosts: [-1]\n", line: 1, key: "hosts[0]", message: "uid -1 is out of range 0…4294967294"),
        Bad(text: "admins: [4294967295]\n", line: 1, key: "admins[0]", message: "uid 4294967295 is out of range"),
        Bad(text: "hosts: [[1000]]\n", line: 1, key: "hosts[0]", message: "expected a string, found a list"),
        Bad(
            text: "socket: /run/a.sock\nshutdownGrace: -2s\n", line: 2, key: "shutdownGrace",
            message: "a duration cannot be negative, found \"-2s\""),
        Bad(text: "shutdownGrace: 2\n", line: 1, key: "shutdownGrace", message: "expected a duration such as 1s or 500ms, found \"2\""),
        Bad(text: "shutdownGrace: two seconds\n", line: 1, key: "shutdownGrace", message: "expected a duration"),
        Bad(
            text: "\n\nstateDirectory: var/lib/appex\n", line: 3, key: "stateDirectory",
            message: "expected an absolute path, found \"var/lib/appex\""),
        Bad(
            text: "socket: /\(String(repeating: "s", count: 120))\n", line: 1, key: "socket",
            message: "a socket path is at most 107 bytes, this one is 121"),
        Bad(text: "memoryBudget: 0MiB\n", line: 1, key: "memoryBudget", message: "expected a size above 0"),
        Bad(text: "memoryBudget: lots\n", line: 1, key: "memoryBudget", message: "expected a size such as 120MiB"),
        Bad(text: "hosts: [0]\nprebuildSandboxes: often\n", line: 2, key: "prebuildSandboxes", message: "expected true or false"),
        Bad(text: "clients:\n  connections: 0\n", line: 2, key: "clients.connections", message: "0 is out of range 1…1000000"),
        Bad(text: "clients:\n  helloTimeout: 0s\n", line: 2, key: "clients.helloTimeout", message: "helloTimeout must be longer than 0"),
        Bad(text: "clients:\n  connectionsPerUid: 3\n", line: 2, key: "clients.connectionsPerUid", message: "unknown key"),
        Bad(text: "admins: [0]\nhosts: [0]\nhosts: [1]\n", line: 2, key: "hosts", message: "duplicate key"),
        Bad(text: "- hosts\n- admins\n", line: 1, key: nil, message: "expected a mapping, found a list"),
        Bad(text: "hosts: [1000\nadmins: [0]\n", line: 2, key: nil, message: "not valid YAML"),
        Bad(text: "apps: [com.example.notes]\n", line: 1, key: "apps", message: "expected a mapping of containing-app identifier"),
        Bad(text: "apps:\n  com.example.notes: 4343\n", line: 2, key: "apps.com.example.notes", message: "expected a list, found a scalar"),
        Bad(text: "apps:\n  ../etc: [4343]\n", line: 2, key: "apps.../etc", message: "containing app \"../etc\""),
        Bad(text: "apps:\n  com.example.notes: [no-such-user-appex]\n", line: 2, key: "apps.com.example.notes[0]", message: "no user named"),
    ]

    @Test(arguments: bad) func badFilesAreRefusedWithLineAndKey(_ bad: Bad) throws {
        let dir = try ConfigurationDirectory()
        let file = try dir.write("appexd.yaml", bad.text)
        defer { dir.cleanUp() }
        let error = #expect(throws: PolicyError.self) { try DaemonConfiguration.load(path: file, explicit: true) }
        #expect(error?.file == file)
        #expect(error?.line == bad.line)
        #expect(error?.key == bad.key)
        #expect(error?.message.contains(bad.message) == true, "\(error?.description ?? "no error")")
        // The form people and editors read: file:line:column: key: message.
        if let error, let key = bad.key {
            #expect(error.description.hasPrefix("\(file):\(bad.line):"))
            #expect(error.description.contains(": \(key): "))
        }
    }
}
