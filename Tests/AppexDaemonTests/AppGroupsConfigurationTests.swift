import AppexDaemon
import AppexPolicy
import AppexTestSupport
import Testing

/// `appGroups:` in appexd.yaml: app group → containing apps and bundles granted it.
@Suite struct AppGroupsConfigurationTests {
    @Test func grantsAreRead() throws {
        let c = try DaemonConfiguration.parse(
            """
            appGroups:
              group.com.example.shared: [com.example.app, com.example.tools.widget]
              group.other:
                - com.other
            """, file: "appexd.yaml")
        #expect(
            c.appGroups == [
                "group.com.example.shared": ["com.example.app", "com.example.tools.widget"],
                "group.other": ["com.other"],
            ])
        #expect(try DaemonConfiguration.parse("hosts: [0]\n", file: "appexd.yaml").appGroups.isEmpty)
    }

    @Test func theShippedExampleGrantsOneGroup() throws {
        let c = try DaemonConfiguration.load(path: Corpus.packageRoot + "/Docs/appexd.yaml", explicit: true)
        #expect(c.appGroups == ["group.com.example.shared": ["com.example.app", "com.example.tools.widget"]])
    }

    /// A mistake: the text, and the line, key and message the error must carry.
    static let bad: [(text: String, line: Int, key: String, message: String)] = [
        ("appGroups: [group.a]\n", 1, "appGroups", "expected a mapping of app group"),
        ("appGroups:\n  group.a: com.example.app\n", 2, "appGroups.group.a", "expected a list, found a scalar"),
        ("appGroups:\n  group.a: [com.example.app]\n  ../etc: [com.example.app]\n", 3, "appGroups.../etc", "app group \"../etc\""),
        ("appGroups:\n  group.a:\n    - com.example.app\n    - a/b\n", 4, "appGroups.group.a[1]", "expected a containing-app or bundle identifier"),
        // Found by the YAML reader, which names the key without its parents.
        ("appGroups:\n  group.a: [x]\n  group.a: [y]\n", 2, "group.a", "duplicate key"),
    ]

    @Test(arguments: bad.indices) func mistakesNameLineAndKey(_ index: Int) throws {
        let bad = Self.bad[index]
        let error = #expect(throws: PolicyError.self) { try DaemonConfiguration.parse(bad.text, file: "appexd.yaml") }
        #expect(error?.line == bad.line, "\(error?.description ?? "no error")")
        #expect(error?.key == bad.key, "\(error?.description ?? "no error")")
        #expect(error?.message.contains(bad.message) == true, "\(error?.description ?? "no error")")
    }
}
