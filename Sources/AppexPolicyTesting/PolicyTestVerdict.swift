import AppexPolicy

/// How a case came out: what was seen, and, when it failed, why in words.
package struct PolicyTestVerdict: Sendable {
    package var passed: Bool
    var observed: String
    /// For a failure: what went wrong. For a pass: how the answer was attributed, if it was.
    var note: String?

    package static func pass(_ observed: String, _ note: String? = nil) -> Self { Self(passed: true, observed: observed, note: note) }
    package static func fail(_ observed: String, _ why: String) -> Self { Self(passed: false, observed: observed, note: why) }
}

/// Judges an appex-probe run against a case's expectation. `rerun` runs the same attempt again
/// with other seccomp rules (`.swapped`: the policy's errnos replaced by a distinctive one;
/// `.none`: no policy rules at all), to tell the filter's answers from the kernel's.
enum PolicyTestJudge {
    enum Rules { case swapped, none }

    static func judge(
        _ expected: PolicyTestExpectation, _ o: ProbeObservation,
        policyErrnos: Set<String>, rerun: (Rules) throws -> ProbeObservation
    ) rethrows -> PolicyTestVerdict {
        let seen = o.summary
        if o.exitStatus == 3 { return .fail(seen, "the probe cannot make this attempt on this machine") }
        if o.exitStatus == 2 { return .fail(seen, "appex-probe refused the arguments: check the case's action") }

        switch expected {
        case .killed(let reason, let within):
            guard o.signal != nil || o.killReason != nil else {
                let why =
                    reason == .seccompViolation ? "not killed: the call returned, so the filter did not stop it" : "not killed: the attempt returned"
                return .fail(seen, o.exitStatus == 0 ? why : "not killed")
            }
            guard o.killReason == reason else {
                return .fail(seen, "killed, but for \(o.killReason?.rawValue ?? "no recorded reason"), not \(reason)")
            }
            if let within, o.runMicroseconds > within.milliseconds * 1000 {
                return .fail(seen + " after \(o.runMicroseconds / 1000) ms", "killed later than \(PolicyTestExpectation.format(within))")
            }
            return .pass(seen + (within != nil ? " after \(o.runMicroseconds / 1000) ms" : ""))

        case .allowed(let output):
            if let bad = unfinished(o) { return .fail(seen, bad) }
            guard o.line.hasPrefix("ok") else { return .fail(seen, "the attempt failed: expected it to succeed") }
            if let output, !o.line.hasPrefix(output) { return .fail(seen, "the answer does not start with \"\(output)\"") }
            return .pass(seen)

        case .invisible:
            if let bad = unfinished(o) { return .fail(seen, bad) }
            if let step = o.failedBeforeAttempt { return .fail(seen, "a step before the attempt failed (\(step)): nothing was looked up") }
            if o.line.hasPrefix("ok") { return .fail(seen, "the path is there: the sandbox shows it") }
            guard o.errnoName == "ENOENT" else { return .fail(seen, "the path is there but the attempt failed otherwise (expected ENOENT)") }
            return .pass(seen)

        case .readOnly:
            if let bad = unfinished(o) { return .fail(seen, bad) }
            if let step = o.failedBeforeAttempt { return .fail(seen, "a step before the attempt failed (\(step))") }
            if o.line.hasPrefix("ok") { return .fail(seen, "written: the path is writable") }
            switch o.errnoName {
            case "EROFS": return .pass(seen)
            case "ENOENT": return .fail(seen, "not read-only: the path is writable, or not there")
            default: return .fail(seen, "expected EROFS (a read-only mount)")
            }

        case .denied(let errnos, let by):
            if let bad = unfinished(o) { return .fail(seen, bad) }
            if let step = o.failedBeforeAttempt { return .fail(seen, "a step before the attempt failed (\(step)): the attempt was not made") }
            if o.line.hasPrefix("ok") { return .fail(seen, "the attempt succeeded: nothing denied it") }
            guard let name = o.errnoName else { return .fail(seen, "no errno in the answer") }
            guard errnos.contains(name) else {
                let why =
                    by == .filter && !policyErrnos.contains(name)
                    ? "answered \(name), not \(errnos.joined(separator: "|")): the call reached the kernel"
                    : "answered \(name), expected \(errnos.joined(separator: "|"))"
                return .fail(seen, why)
            }
            switch by {
            case .any:
                return .pass(seen)
            case .filter:
                let swapped = try rerun(.swapped)
                if swapped.errnoName == ProbeErrno.name(PolicyTestProbeRunner.distinctiveErrno) {
                    return .pass(seen, "the filter's answer: \(swapped.line) with the policy's errnos swapped")
                }
                // Not the policy's errno: the kernel's own answer, or one the filter gives
                // whatever the policy says (ENOSYS for clone3 and unknown calls).
                let open = try rerun(.none)
                if open.summary != o.summary {
                    return .pass(seen, "the filter's fixed answer: \(open.summary) without the policy's rules")
                }
                return .fail(
                    seen,
                    "the kernel answers \(name) by itself (also with the policy's errnos swapped, and with no policy rules): the policy does not deny this"
                )
            case .kernel:
                guard policyErrnos.contains(name) else { return .pass(seen) }
                let swapped = try rerun(.swapped)
                if swapped.errnoName == ProbeErrno.name(PolicyTestProbeRunner.distinctiveErrno) {
                    return .fail(seen, "the filter answered, not the kernel: \(swapped.line) with the policy's errnos swapped")
                }
                return .pass(seen, "the kernel's answer: \(swapped.line) also with the policy's errnos swapped")
            }

        case .launchTimeout, .warned:
            return .fail(seen, "needs the supervisor")  // the parser sends these there
        }
    }

    /// Why an answer that should be a plain line is not one: a kill, an unexpected exit.
    static func unfinished(_ o: ProbeObservation) -> String? {
        if o.signal != nil {
            return o.killReason == .seccompViolation ? "killed by the filter instead" : "killed instead (\(o.killReason?.rawValue ?? "signal"))"
        }
        if o.exitStatus != 0 { return "the probe did not answer normally" }
        return nil
    }
}
