import AppexPolicy
import AppexSandbox
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One line of the report: a case, or a check of the bystander or the host.
package struct PolicyTestResult: Sendable {
    var suite: String
    var name: String
    var file: String?
    var line: Int?
    var extensionPoint: String?
    var expected: String
    package var verdict: PolicyTestVerdict
    var milliseconds: Int64

    package init(
        suite: String, name: String, file: String? = nil, line: Int? = nil, extensionPoint: String? = nil,
        expected: String, verdict: PolicyTestVerdict, milliseconds: Int64
    ) {
        self.suite = suite
        self.name = name
        self.file = file
        self.line = line
        self.extensionPoint = extensionPoint
        self.expected = expected
        self.verdict = verdict
        self.milliseconds = milliseconds
    }
}

/// Runs planned cases on worker threads: appex-probe cases on `jobs` threads (they use the
/// CPU), supervisor cases on four times as many (they mostly wait for a deadline). Results come
/// back in plan order through `report` as soon as each one and all before it are done.
package final class PolicyTestRunner: @unchecked Sendable {
    let environment: PolicyTestEnvironment
    let catalog: PolicyTestCatalog
    let probes: PolicyTestProbeRunner
    let supervisors: PolicyTestSupervisorRunner
    let bystander: PolicyTestBystander?
    let jobs: Int
    /// Set by `cancel()` (SIGINT, SIGTERM): workers take no new case; those running finish.
    private let cancelled = Mutex(false)

    package func cancel() { cancelled.withLock { $0 = true } }
    var wasCancelled: Bool { cancelled.withLock { $0 } }

    package init(environment: PolicyTestEnvironment, catalog: PolicyTestCatalog, bystander: PolicyTestBystander?, jobs: Int) {
        self.environment = environment
        self.catalog = catalog
        self.bystander = bystander
        self.jobs = max(1, jobs)
        probes = PolicyTestProbeRunner(environment: environment)
        supervisors = PolicyTestSupervisorRunner(environment: environment, catalog: catalog)
    }

    package func run(_ planned: [PlannedPolicyTest], report: @escaping @Sendable (PolicyTestResult) -> Void) -> [PolicyTestResult] {
        let results = Mutex<(done: [PolicyTestResult?], printed: Int)>((Array(repeating: nil, count: planned.count), 0))
        let probeCases = planned.indices.filter { !planned[$0].testCase.throughSupervisor }
        let supervisorCases = planned.indices.filter { planned[$0].testCase.throughSupervisor }
        let group = DispatchGroup()

        @Sendable func finish(_ index: Int, _ result: PolicyTestResult) {
            results.withLock { r in
                r.done[index] = result
                while r.printed < r.done.count, let next = r.done[r.printed] {
                    report(next)
                    r.printed += 1
                }
            }
        }
        func pool(_ indices: [Int], threads: Int, _ body: @escaping @Sendable (PlannedPolicyTest, Int) -> PolicyTestVerdict) {
            let runner = self
            let next = Mutex(0)
            for worker in 0..<min(threads, indices.count) {
                group.enter()
                let t = Thread {
                    while true {
                        if runner.wasCancelled { break }
                        let i = next.withLock { n -> Int? in
                            defer { n += 1 }
                            return n < indices.count ? indices[n] : nil
                        }
                        guard let i else { break }
                        let p = planned[i]
                        let start = ContinuousClock.now
                        let verdict = body(p, worker)
                        finish(
                            i,
                            PolicyTestResult(
                                suite: p.suite, name: p.name, file: p.testCase.file, line: p.testCase.line,
                                extensionPoint: p.extensionPoint, expected: p.testCase.expectation.description,
                                verdict: verdict, milliseconds: (ContinuousClock.now - start).milliseconds))
                    }
                    group.leave()
                }
                t.stackSize = 1 << 20
                t.start()
            }
        }
        pool(probeCases, threads: jobs) { [self] p, worker in runProbeCase(p, worker: worker) }
        pool(supervisorCases, threads: jobs * 4) { [self] p, _ in supervisors.run(p) }
        group.wait()
        probes.closeAll()
        // After an interruption, the cases that ran and were held back behind one that did not.
        return results.withLock { r in
            for (i, result) in r.done.enumerated() where i >= r.printed { if let result { report(result) } }
            return r.done.compactMap { $0 }
        }
    }

    /// The values of `${NAME}` for a case (`uid` once its sandbox exists).
    func variables(_ p: PlannedPolicyTest, uid: UInt32?) -> [String: String] {
        let mib: Int64 = 1 << 20
        var v: [String: String] = [
            "memoryLimitMiB": String(p.policy.policy.memory.activeHardLimit.bytes / mib),
            "cgroupMemoryMaxMiB": String((p.policy.cgroupMemoryMax + mib - 1) / mib),
            "pidsLimit": String(p.policy.policy.pidsLimit),
            "openFilesLimit": String(p.policy.policy.openFilesLimit),
            "testPID": String(getpid()),
            "setuidProbe": PolicyTestEnvironment.setuidProbePath,
        ]
        if let uid { v["uid"] = String(uid) }
        if let port = environment.listenerPort { v["hostLoopbackPort"] = String(port) }
        if let bystander {
            v["bystanderPID"] = String(bystander.pid)
            v["bystanderContainer"] = bystander.container.path
        }
        return v
    }

    func runProbeCase(_ p: PlannedPolicyTest, worker: Int) -> PolicyTestVerdict {
        do {
            var spec = probes.spec(policy: p.policy, arguments: [])
            let key = PolicyTestProbeRunner.sandboxKey(
                extensionPoint: p.extensionPoint, policyFile: p.testCase.policyFile,
                spec: spec, worker: worker)
            let (sandbox, container, identifier) = try probes.sandbox(for: spec, key: key)
            spec.bundleIdentifier = identifier
            let values = variables(p, uid: container.uid)
            spec.arguments = (p.testCase.action ?? []).map { PolicyTestVariables.substitute($0, values) }
            var expectation = p.testCase.expectation
            if case .allowed(let output?) = expectation {
                expectation = .allowed(output: PolicyTestVariables.substitute(output, values))
            }
            let first = try probes.run(spec, in: sandbox, timeout: p.testCase.timeout)
            let policyErrnos = Set(spec.syscallRules.compactMap { $0.action.errnoValue }.compactMap(ProbeErrno.name))
            let verdict = try PolicyTestJudge.judge(expectation, first, policyErrnos: policyErrnos) { rules in
                var again = spec
                again.syscallRules = rules == .swapped ? PolicyTestProbeRunner.swapped(spec.syscallRules) : []
                return try probes.run(again, in: sandbox, timeout: p.testCase.timeout)
            }
            return verdict
        } catch {
            return .fail("could not run", "\(error)")
        }
    }

    /// After the cases: the bystander is still running and kept its data.
    package func bystanderChecks() -> [PolicyTestResult] {
        guard let bystander else { return [] }
        let running = bystander.isRunning
        let now = bystander.currentSecret
        return [
            PolicyTestResult(
                suite: "bystander", name: "still running", expected: "running",
                verdict: running ? .pass("running (pid \(bystander.pid))") : .fail("ended", "a case reached the bystander"),
                milliseconds: 0),
            PolicyTestResult(
                suite: "bystander", name: "kept its data", expected: "\(PolicyTestBystander.secretName) unchanged",
                verdict: now == bystander.secret
                    ? .pass("unchanged")
                    : .fail(now == nil ? "gone" : "changed", "a case reached the bystander's container"),
                milliseconds: 0),
        ]
    }
}
