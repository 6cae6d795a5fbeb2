import AppexPolicy
import Testing

@testable import AppexSandbox

#if canImport(Glibc)
import Glibc
#endif

/// The canonical form of a rule set, which keys the compiled-program cache: one `name action`
/// line per syscall, sorted by name, whatever the rules' order and repetitions.
@Suite struct SeccompCanonicalTests {
    /// The definition, written the plain way: a dictionary of name → action, its keys sorted.
    static func reference(_ rules: [SeccompRule]) -> String {
        var seen: [String: SyscallAction] = [:]
        for r in rules { seen[r.syscall] = r.action }
        return seen.keys.sorted().map { $0 + " " + seen[$0]!.description }.joined(separator: "\n")
    }

    static let names = [
        "ptrace", "keyctl", "unshare", "personality", "mount", "umount2", "bpf",
        "add_key", "perf_event_open", "kexec_load", "setns", "io_uring_setup",
    ]
    static let actions: [SyscallAction] = [.errno(EPERM), .errno(EACCES), .kill, .log, .notify(errno: EPERM)]

    @Test func linesAreTheDefinitionsForShuffledRepeatedRules() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            // Each name keeps one action; it appears 0–3 times, in a random order.
            var rules: [SeccompRule] = []
            for name in Self.names {
                let action = Self.actions.randomElement(using: &generator)!
                for _ in 0..<Int.random(in: 0...3, using: &generator) { rules.append(SeccompRule(name, action)) }
            }
            rules.shuffle(using: &generator)
            let canonical = try SeccompCompiler.canonicalize(rules)
            #expect(canonical == Self.reference(rules))
            #expect(try SeccompCompiler.canonicalize(rules.shuffled(using: &generator)) == canonical)
        }
        #expect(try SeccompCompiler.canonicalize([]) == "")
    }

    @Test func twoActionsForOneSyscallAreRefusedNamingTheEarlierFirst() {
        let rules = [
            SeccompRule("mount", .errno(EPERM)), SeccompRule("ptrace", .kill),
            SeccompRule("bpf", .log), SeccompRule("ptrace", .kill), SeccompRule("ptrace", .errno(EPERM)),
        ]
        #expect {
            _ = try SeccompCompiler.canonicalize(rules)
        } throws: { error in
            "\(error)".contains("syscall ptrace has two actions: \(SyscallAction.kill) and \(SyscallAction.errno(EPERM))")
        }
    }
}
