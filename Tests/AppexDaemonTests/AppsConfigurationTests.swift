import AppexDaemon
import Testing

/// `apps:` in appexd.yaml: containing app → uids that speak for it as its host.
@Suite struct AppsConfigurationTests {
    @Test func onlyAListedHostSpeaksForTheApp() throws {
        let c = try DaemonConfiguration.parse(
            """
            hosts: [4242, 4343]
            apps:
              com.example.notes: [4343, 0]
              com.example.mail: []
            """, file: "appexd.yaml")
        #expect(c.apps == ["com.example.notes": [4343, 0], "com.example.mail": []])
        #expect(c.maySpeak(forApp: "com.example.notes", uid: 4343))
        #expect(!c.maySpeak(forApp: "com.example.notes", uid: 4242), "a host not listed for the app")
        #expect(!c.maySpeak(forApp: "com.example.mail", uid: 4343), "listed for another app")
        #expect(!c.maySpeak(forApp: "com.example.unknown", uid: 4343), "an app nobody is listed for")
        #expect(c.maySpeak(forApp: "com.example.unknown", uid: 0), "root speaks for every app")
    }

    @Test func aListedUIDThatMayNotHostDoesNotSpeak() throws {
        let c = try DaemonConfiguration.parse("hosts: []\napps:\n  com.example.notes: [4343]\n", file: "appexd.yaml")
        #expect(!c.maySpeak(forApp: "com.example.notes", uid: 4343))
    }

    @Test func reloadAppliesApps() throws {
        let old = try DaemonConfiguration.parse("hosts: [4343]\n", file: "appexd.yaml")
        let new = try DaemonConfiguration.parse("hosts: [4343]\napps:\n  com.example.notes: [4343]\n", file: "appexd.yaml")
        let reload = ConfigurationReload(from: old, to: new)
        #expect(reload.applied == ["apps"] && reload.needsRestart.isEmpty)
        #expect(reload.inForce.maySpeak(forApp: "com.example.notes", uid: 4343))
    }
}
