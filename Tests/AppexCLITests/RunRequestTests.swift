import AppexRun
import ArgumentParser
import Testing

@testable import appex_commands

/// AppexMain reads common `appex run` lines itself (RunRequest.parseCommon) instead of through
/// argument-parser: on every line it accepts it must read what argument-parser reads, and every
/// line it does not read exactly so must be left to argument-parser.
@Suite struct RunRequestTests {
    /// What argument-parser makes of `line` (the command line after the program's name).
    static func viaArgumentParser(_ line: [String]) throws -> RunRequest? {
        (try Appex.parseAsRoot(line) as? RunCommand)?.request
    }

    static let accepted: [[String]] = [
        ["run", "/x/true", "--extension-point", "com.apple.widget-extension"],
        ["run", "--extension-point", "com.apple.widget-extension", "/x/true"],
        ["run", "/x/Share.appex"],
        ["run", "/x/Share.appex", "--json"],
        ["run", "/x/Share.appex", "--stdio", "--json"],
        ["run", "--json", "/x/Share.appex", "--state-dir", "/tmp/s", "--uid-range", "300000-300999"],
        ["run", "/x/true", "--extension-point=com.apple.share-services", "--state-dir=/tmp/s"],
        ["run", "/x/true", "--extension-point", "p", "--policy-dir", "/a", "--policy-dir=/b", "--policy-dir", "/c"],
        ["run", "/x/true", "--extension-point", "p", "--timeout", "2.5", "--launches", "3"],
        ["run", "/x/true", "--extension-point", "p", "--timeout", "1e-3", "--launches", "+7"],
        ["run", "/x/true", "--extension-point", "p", "--timeout", "0", "--launches", "0"],
        ["run", "/x/true", "--extension-point", "p", "--"],
        ["run", "/x/true", "--extension-point", "p", "--", "--json", "-h", "x", "--", "y"],
        ["run", "/x/true", "--extension-point", "a=b=c"],
        ["run", "/x/true", "--extension-point", "p", "--uid-range", "nonsense"],
    ]

    @Test(arguments: accepted)
    func readsWhatArgumentParserReads(_ line: [String]) throws {
        let fast = try #require(RunRequest.parseCommon(line), "the fast path should read \(line)")
        #expect(try Self.viaArgumentParser(line) == fast)
    }

    /// Lines it leaves alone: argument-parser's help and errors stay argument-parser's.
    static let leftToArgumentParser: [[String]] = [
        ["validate", "/x/Share.appex"],
        ["run"],
        ["run", "--help"],
        ["run", "-h"],
        ["run", "/x/true", "--help"],
        ["run", "/x/true", "--extension-point"],
        ["run", "/x/true", "--extension-point", "--json"],
        ["run", "/x/true", "--extension-point", ""],
        ["run", "/x/true", "--extension-point", "a", "--extension-point", "b"],
        ["run", "/x/true", "--json", "--json"],
        ["run", "/x/true", "--json=yes"],
        ["run", "/x/true", "--stdio", "--stdio"],
        ["run", "/x/true", "--stdio", "--no-stdio"],
        ["run", "/x/true", "--policies", "/a"],
        ["run", "/x/true", "--timeout", "soon"],
        ["run", "/x/true", "--timeout", "-1"],
        ["run", "/x/true", "--launches", "2.5"],
        ["run", "/x/true", "--state", "/tmp/s"],
        ["run", "/x/true", "--unknown"],
        ["run", "/x/a", "/x/b"],
        ["run", "-x"],
        ["run", "--", "/x/true"],
        ["run", "--extension-point", "p"],
    ]

    @Test(arguments: leftToArgumentParser)
    func leavesTheRestToArgumentParser(_ line: [String]) {
        #expect(RunRequest.parseCommon(line) == nil)
    }

    /// Lines both read: random orders and spellings of the options, checked against
    /// argument-parser.
    @Test func randomOrdersAgree() throws {
        var generator = SystemRandomNumberGenerator()
        let options: [[String]] = [
            ["--json"], [Bool.random(using: &generator) ? "--stdio" : "--no-stdio"], ["--extension-point", "com.apple.widget-extension"],
            ["--extension-point=p"],
            ["--policy-dir", "/a"], ["--policy-dir=/b"], ["--state-dir", "/s"], ["--state-dir=/t"],
            ["--uid-range", "200000-200099"], ["--timeout", "0.25"], ["--launches", "4"],
        ]
        for _ in 0..<60 {
            var parts = options.shuffled(using: &generator).prefix(Int.random(in: 0...options.count, using: &generator))
                .map { $0 }
            parts.insert(["/x/true"], at: Int.random(in: 0...parts.count, using: &generator))
            var line = ["run"] + parts.flatMap { $0 }
            if Bool.random(using: &generator) { line += ["--", "a", "--b"] }
            let viaParser = try? Self.viaArgumentParser(line)
            guard let fast = RunRequest.parseCommon(line) else {
                // Left alone only when it repeats a single-valued option.
                let names = parts.compactMap { $0.first?.split(separator: "=").first.map(String.init) }
                    .filter { $0 != "/x/true" && $0 != "--policy-dir" }
                #expect(Set(names).count < names.count, "\(line)")
                continue
            }
            #expect(viaParser == fast, "\(line)")
        }
    }
}
