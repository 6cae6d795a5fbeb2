import AppexKillReason
import Testing

@testable import AppexPolicyTesting

/// How a probe run is judged against what a case expects, and how the filter's answers are
/// told from the kernel's by running the attempt again with other rules.
@Suite struct PolicyTestJudgeTests {
    static func answered(_ line: String, exit: Int32 = 0) -> ProbeObservation {
        ProbeObservation(exitStatus: exit, signal: nil, killReason: nil, line: line, output: [line], runMicroseconds: 1000)
    }

    static func killed(_ reason: KillReason?, signal: Int32 = 9, afterMicros: Int64 = 1000) -> ProbeObservation {
        ProbeObservation(exitStatus: nil, signal: signal, killReason: reason, line: "", output: [], runMicroseconds: afterMicros)
    }

    static var distinctive: String { ProbeErrno.name(PolicyTestProbeRunner.distinctiveErrno)! }

    /// Judges with reruns answered from `reruns`, recording which were asked for.
    static func judge(
        _ expected: PolicyTestExpectation, _ o: ProbeObservation, policyErrnos: Set<String> = [],
        reruns: [PolicyTestJudge.Rules: ProbeObservation] = [:]
    ) -> (PolicyTestVerdict, [PolicyTestJudge.Rules]) {
        var asked: [PolicyTestJudge.Rules] = []
        let verdict = PolicyTestJudge.judge(expected, o, policyErrnos: policyErrnos) { rules in
            asked.append(rules)
            return reruns[rules] ?? o
        }
        return (verdict, asked)
    }

    @Test func allowedNeedsAnOkAnswerStartingWithTheOutput() {
        #expect(Self.judge(.allowed(output: nil), Self.answered("ok pid=7")).0.passed)
        #expect(Self.judge(.allowed(output: "ok uid=1"), Self.answered("ok uid=1 euid=1")).0.passed)
        let wrong = Self.judge(.allowed(output: "ok uid=1"), Self.answered("ok uid=2")).0
        #expect(!wrong.passed && wrong.note == "the answer does not start with \"ok uid=1\"")
        let failed = Self.judge(.allowed(output: nil), Self.answered("errno=EPERM")).0
        #expect(!failed.passed && failed.note == "the attempt failed: expected it to succeed")
        let seccomp = Self.judge(.allowed(output: nil), Self.killed("seccomp-violation", signal: 31)).0
        #expect(!seccomp.passed && seccomp.note == "killed by the filter instead")
        #expect(seccomp.observed == "killed by signal 31, seccomp-violation")
    }

    @Test func aProbeThatCannotMakeTheAttemptFailsWhateverIsExpected() {
        let cannot = Self.judge(.invisible, Self.answered("unsupported", exit: 3)).0
        #expect(!cannot.passed && cannot.note == "the probe cannot make this attempt on this machine")
        let usage = Self.judge(.allowed(output: nil), Self.answered("usage", exit: 2)).0
        #expect(!usage.passed && usage.note == "appex-probe refused the arguments: check the case's action")
    }

    @Test func deniedByAnyTakesOneRunAndAnyListedErrno() {
        let (pass, asked) = Self.judge(.denied(errnos: ["EPERM", "EACCES"], by: .any), Self.answered("errno=EACCES"))
        #expect(pass.passed && asked.isEmpty)
        let other = Self.judge(.denied(errnos: ["EPERM"], by: .any), Self.answered("errno=ENOENT")).0
        #expect(!other.passed && other.note == "answered ENOENT, expected EPERM")
        let ok = Self.judge(.denied(errnos: ["EPERM"], by: .any), Self.answered("ok")).0
        #expect(!ok.passed && ok.note == "the attempt succeeded: nothing denied it")
        let early = Self.judge(.denied(errnos: ["EPERM"], by: .any), Self.answered("errno=EPERM at=chdir")).0
        #expect(!early.passed && early.note?.hasPrefix("a step before the attempt failed (chdir)") == true)
    }

    @Test func theFiltersAnswerFollowsThePolicysErrno() {
        // With the policy's errnos swapped the answer changes: the filter gave it.
        let (byFilter, asked) = Self.judge(
            .denied(errnos: ["EPERM"], by: .filter), Self.answered("errno=EPERM"),
            policyErrnos: ["EPERM"], reruns: [.swapped: Self.answered("errno=\(Self.distinctive)")])
        #expect(byFilter.passed && asked == [.swapped])
        #expect(byFilter.note == "the filter's answer: errno=\(Self.distinctive) with the policy's errnos swapped")

        // The same answer swapped and with no rules at all: the kernel's, and the case fails.
        let (kernel, askedTwice) = Self.judge(
            .denied(errnos: ["EPERM"], by: .filter), Self.answered("errno=EPERM"),
            policyErrnos: ["EPERM"])
        #expect(!kernel.passed && askedTwice == [.swapped, .none])
        #expect(kernel.note?.hasPrefix("the kernel answers EPERM by itself") == true)

        // The same when swapped but different with no rules: the filter's fixed answer (ENOSYS).
        let fixed = Self.judge(
            .denied(errnos: ["ENOSYS"], by: .filter), Self.answered("errno=ENOSYS"),
            reruns: [.none: Self.answered("ok")]
        ).0
        #expect(fixed.passed && fixed.note == "the filter's fixed answer: ok without the policy's rules")

        // An errno the policy never gives cannot be the filter's: said without a rerun.
        let (reached, none) = Self.judge(.denied(errnos: ["EPERM"], by: .filter), Self.answered("errno=EACCES"), policyErrnos: ["EPERM"])
        #expect(!reached.passed && none.isEmpty && reached.note == "answered EACCES, not EPERM: the call reached the kernel")
    }

    @Test func theKernelsAnswerIsNotTheFilters() {
        // Not an errno of the policy: the kernel's without asking again.
        let (plain, asked) = Self.judge(.denied(errnos: ["EAGAIN"], by: .kernel), Self.answered("errno=EAGAIN"), policyErrnos: ["EPERM"])
        #expect(plain.passed && asked.isEmpty)
        // An errno the policy also gives: the swapped run tells.
        let filter = Self.judge(
            .denied(errnos: ["EPERM"], by: .kernel), Self.answered("errno=EPERM"), policyErrnos: ["EPERM"],
            reruns: [.swapped: Self.answered("errno=\(Self.distinctive)")]
        ).0
        #expect(!filter.passed && filter.note?.hasPrefix("the filter answered, not the kernel") == true)
        let kernel = Self.judge(.denied(errnos: ["EPERM"], by: .kernel), Self.answered("errno=EPERM"), policyErrnos: ["EPERM"]).0
        #expect(kernel.passed && kernel.note == "the kernel's answer: errno=EPERM also with the policy's errnos swapped")
    }

    @Test func killsNeedTheReasonAndTheDeadline() {
        let expected = PolicyTestExpectation.killed(reason: "per-process-limit", within: .milliseconds(500))
        let inTime = Self.judge(expected, Self.killed("per-process-limit", afterMicros: 200_000)).0
        #expect(inTime.passed && inTime.observed == "killed by signal 9, per-process-limit after 200 ms")
        let late = Self.judge(expected, Self.killed("per-process-limit", afterMicros: 800_000)).0
        #expect(!late.passed && late.note == "killed later than 500ms")
        let other = Self.judge(expected, Self.killed("crashed")).0
        #expect(!other.passed && other.note == "killed, but for crashed, not per-process-limit")
        let alive = Self.judge(.killed(reason: "seccomp-violation", within: nil), Self.answered("ok")).0
        #expect(!alive.passed && alive.note == "not killed: the call returned, so the filter did not stop it")
    }

    @Test func invisibleIsENOENTAndReadOnlyIsEROFS() {
        #expect(Self.judge(.invisible, Self.answered("errno=ENOENT")).0.passed)
        #expect(Self.judge(.invisible, Self.answered("ok")).0.note == "the path is there: the sandbox shows it")
        #expect(
            Self.judge(.invisible, Self.answered("errno=EACCES")).0.note == "the path is there but the attempt failed otherwise (expected ENOENT)")
        #expect(Self.judge(.readOnly, Self.answered("errno=EROFS")).0.passed)
        #expect(Self.judge(.readOnly, Self.answered("errno=ENOENT")).0.note == "not read-only: the path is writable, or not there")
        #expect(Self.judge(.readOnly, Self.answered("ok")).0.note == "written: the path is writable")
    }

    @Test func anObservationReadsItsAnswer() {
        let early = Self.answered("errno=EPERM at=mount extra")
        #expect(early.errnoName == "EPERM" && early.failedBeforeAttempt == "mount")
        #expect(Self.answered("errno=EPERM", exit: 1).errnoName == nil, "only a normal answer has an errno")
        #expect(Self.answered("", exit: 0).summary == "exit 0, no answer")
        #expect(Self.answered("boom", exit: 4).summary == "exit 4: boom")
        var usage = Self.answered("", exit: 2)
        usage.output = ["", "usage: appex-probe ACTION"]
        #expect(usage.summary == "usage error (exit 2): usage: appex-probe ACTION")
        var last = Self.killed(nil)
        last.line = "ok"
        #expect(last.summary == "killed by signal 9 after \"ok\"")
    }

    @Test func errnoNamesAreTheKernelsNumbers() {
        #expect(ProbeErrno.value("EPERM") == 1 && ProbeErrno.value("ENOENT") == 2 && ProbeErrno.value("EROFS") == 30)
        #expect(ProbeErrno.value("ENOTANERRNO") == nil)
        for entry in ProbeErrno.table {
            #expect(ProbeErrno.value(entry.name) == entry.value)
        }
        #expect(Set(ProbeErrno.table.map(\.name)).count == ProbeErrno.table.count, "no name twice")
        #expect(
            !["EPERM", "EACCES", "ENOENT", "EROFS", "ENOSYS"].contains(Self.distinctive),
            "the distinctive errno is none a policy or the kernel commonly gives")
    }
}
