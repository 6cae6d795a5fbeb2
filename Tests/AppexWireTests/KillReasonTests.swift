import AppexKillReason
import AppexWire
import Foundation
import Testing

/// The one vocabulary of how an instance ended: the strings people, scripts, dashboards and
/// databases match on stay as they are, and any string reads back.
@Suite struct KillReasonTests {
    /// As Docs/supervisor.md and Docs/protocol.md spell them (and `appex run`'s `run-timeout`).
    static let spelled = [
        "launch-timeout", "request-timeout", "unresponsive", "crashed", "seccomp-violation", "per-process-limit",
        "memory-pressure", "kernel-oom", "idle-exit", "protocol-error", "launch-failed", "disabled", "uninstalled",
        "updated", "supervisor-shutdown", "exited", "run-timeout",
    ]

    @Test func everyReasonKeepsItsString() {
        #expect(KillReason.known.map(\.rawValue) == Self.spelled)
        for raw in Self.spelled {
            let reason = KillReason(rawValue: raw)
            #expect(reason.rawValue == raw && KillReason.known.contains(reason) && "\(reason)" == raw)
        }
    }

    @Test func theWireCarriesTheSameStrings() {
        #expect(Reason.perProcessLimit.rawValue == "per-process-limit" && Reason.kernelOOM.rawValue == "kernel-oom")
        #expect(Reason.launchTimeout.rawValue == "launch-timeout" && Reason.idleExit.rawValue == "idle-exit")
        #expect(Reason.supervisorShutdown.rawValue == "supervisor-shutdown" && Reason.shutdown.rawValue == "shutdown")
        for reason in KillReason.known { #expect(Reason(reason).killReason == reason) }
        #expect(Reason.killReasons.map(\.rawValue) == KillReason.exportedAtZero.map(\.rawValue))
        #expect(Reason.notActivated.killReason == .unrecognized("not-activated"))
    }

    @Test func anUnknownStringIsKeptAsItIs() throws {
        let reason = KillReason(rawValue: "watchdog-expired")
        #expect(reason == .unrecognized("watchdog-expired") && reason.rawValue == "watchdog-expired")
        #expect(KillReason.unrecognized("crashed") == .crashed)
        let decoded = try JSONDecoder().decode([KillReason].self, from: Data(#"["kernel-oom","watchdog-expired"]"#.utf8))
        #expect(decoded == [.kernelOOM, .unrecognized("watchdog-expired")])
        #expect(String(decoding: try JSONEncoder().encode(decoded), as: UTF8.self) == #"["kernel-oom","watchdog-expired"]"#)
    }

    @Test func killsAndGracefulEnds() {
        #expect(KillReason.known.filter { !$0.isCountedAsKill } == [.exited])
        #expect(KillReason.known.filter(\.isGraceful) == [.idleExit, .disabled, .uninstalled, .updated, .supervisorShutdown, .exited])
        #expect(KillReason.exportedAtZero.allSatisfy { $0.isCountedAsKill && KillReason.known.contains($0) })
    }
}
