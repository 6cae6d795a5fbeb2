import AppexSupervisor
import AppexWire
import BenchSupport
import Histogram
import Logging

/// Cold launches through an embedded supervisor, under each extension's shipped policy: every
/// request starts a new process (the previous one is ended idle first), so each sample is the
/// supervisor's whole cold path from its decision to spawn until the extension's Hello:
/// preparation, clone into the extension's sandbox (its namespaces and view kept from the
/// first launch, as appexd keeps them), cgroup, uid, seccomp, exec, then the extension's own
/// start-up. The first launch, which also builds the sandbox, is reported on its own.
struct ColdLaunch {
    let supervisor: Supervisor

    struct Samples {
        var checkIn = newHistogram()
        /// Decision → exec done: Appex's part.
        var sandbox = newHistogram()
        /// Exec done → Hello: the extension's part.
        var startUp = newHistogram()
        var first: UInt64?
        var firstView: UInt64?

        /// The report's rows for one extension: its floor, then check-in split into its parts.
        func rows(_ name: String, floor floorName: String, _ floor: Histogram<UInt64>) -> [Row] {
            [
                Row(name: floorName, histogram: floor),
                Row(name: "\(name): spawn → check-in", histogram: checkIn, floor: floorName),
                Row(name: "   sandbox: decision → exec", histogram: sandbox),
                Row(name: "   extension: exec → Hello", histogram: startUp),
            ]
        }
    }

    static func request(_ id: String, number: UInt64) -> HostBeginRequest {
        HostBeginRequest(requestID: number, bundleIdentifier: id, items: [ExtensionItem(attributedContentText: "bench")])
    }

    /// One cold request; returns its phases in ns (from the µs appexd reports).
    func coldRequest(_ id: String) async -> [String: UInt64] {
        await supervisor.endIdleInstances(of: id)
        let result = await supervisor.request(Self.request(id, number: UInt64.random(in: 1...UInt64.max / 2)))
        guard case .ended(let outcome, _, _) = result, outcome.outcome == .completed, outcome.cold == true else {
            fail("\(id): a cold request did not complete cold: \(result)")
        }
        var phases: [String: UInt64] = [:]
        for p in outcome.phases { phases[p.name] = p.microseconds * 1000 }
        return phases
    }

    func measure(_ id: String, iterations: Int, dropCachesFirst: Bool) async -> Samples {
        var s = Samples()
        for _ in 0..<iterations {
            if dropCachesFirst {
                await supervisor.endIdleInstances(of: id)
                dropCaches()
            }
            let phases = await coldRequest(id)
            guard let checkIn = phases["checkIn"], let spawn = phases["spawn"] else {
                fail("\(id): no checkIn/spawn phase in \(phases)")
            }
            if phases["view"] != nil {
                s.first = checkIn
                s.firstView = phases["view"]
                continue
            }
            s.checkIn.record(checkIn)
            s.sandbox.record(spawn)
            s.startUp.record(checkIn > spawn ? checkIn - spawn : 0)
        }
        return s
    }
}

/// A logger that keeps the supervisor's warnings and errors and drops its per-launch chatter.
func quietLogger() -> Logger {
    var logger = Logger(label: "appex.supervisor-bench")
    logger.logLevel = .warning
    return logger
}
