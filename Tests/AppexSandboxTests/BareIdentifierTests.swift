import Testing

@testable import AppexSandbox
@testable import AppexStateDirectory

/// The identifier `appex run EXECUTABLE` gives a bare executable: always one the container
/// store accepts, whatever the file is called.
@Suite struct BareIdentifierTests {
    @Test(arguments: [
        ("/usr/bin/true", "bare.true"),
        ("/tmp/appex-probe", "bare.appex-probe"),
        ("/x/.hidden", "bare.hidden"),
        ("/x/..two", "bare.two"),
        ("/x/a..b", "bare.a.-b"),
        ("/x/\u{e9}t\u{e9} 2", "bare.-t--2"),
        ("/x/e\u{301}", "bare.e-"),
        ("/x/y/", "bare.y"),
        ("/", "bare.executable"),
        ("/x/...", "bare.executable"),
    ])
    func aBareExecutableGetsAValidIdentifier(path: String, expected: String) throws {
        let id = SandboxSpec.bareIdentifier(path)
        #expect(id == expected)
        try ContainerStore.validate(identifier: id)
    }
}
