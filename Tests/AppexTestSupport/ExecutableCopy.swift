/// Copies an executable that a test then runs. The copy is written by a child (`install`), so
/// no descriptor open for writing on it lives in the test process: one made here would be
/// inherited by whatever another test forks meanwhile, and exec of the copy would fail with
/// ETXTBSY ("Text file busy") for as long as that child holds it.
public enum ExecutableCopy {
    public static func make(from source: String, to destination: String) throws {
        let command = ["-m", "0755", source, destination]
        let r = try CProgram.run("/usr/bin/install", command)
        guard r.status == 0 else { throw CProgram.Failure(command: ["/usr/bin/install"] + command, output: r) }
    }
}
