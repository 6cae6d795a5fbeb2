import AppexHostClient
import AppexWire
import Foundation

/// One request as a host saw it end.
struct Sample: Sendable {
    var behaviour: Behaviour
    /// `completed`; `cancelled <domain> <code>`; `failed <reason>`; `refused <reason>` (appexd
    /// said no before it reached an extension); `error <kind>` (the connection failed);
    /// `MISSING` (no outcome within the deadline).
    var outcome: String
    var nanoseconds: UInt64
    /// When it was sent (CLOCK_MONOTONIC, ns).
    var start: UInt64 = 0
    /// The request launched the instance that served it.
    var cold: Bool
    /// appexd's own phases, ns: request received → outcome sent (`total`), BeginRequest to the
    /// extension → its answer (`roundTrip`), waiting for an instance (`queue`, 0 when none).
    var total: UInt64?, roundTrip: UInt64?, queue: UInt64 = 0
}

extension Sample {
    static let missing = "MISSING"

    init(_ behaviour: Behaviour, _ result: Result<ReceivedOutcome, any Error>?, nanoseconds: UInt64) {
        self.behaviour = behaviour
        self.nanoseconds = nanoseconds
        cold = false
        switch result {
        case nil:
            outcome = Sample.missing
        case .success(let received):
            cold = received.cold
            func phase(_ name: String) -> UInt64? { received.phases.first { $0.name == name }.map { $0.microseconds * 1000 } }
            total = phase("total")
            roundTrip = phase("roundTrip")
            queue = phase("queue") ?? 0
            switch received.outcome {
            case .completed: outcome = "completed"
            case .cancelled: outcome = "cancelled \(received.error.map { "\($0.domain) \($0.code)" } ?? "")"
            case .failed: outcome = "failed \(received.reason?.rawValue ?? "?")"
            }
            received.closeDescriptors()
        case .failure(let error as HostClientError) where error.kind == .refused:
            outcome = "refused \(error.reason?.rawValue ?? "?")"
        case .failure(let error as HostClientError):
            outcome = "error \(error.kind)"
        case .failure(let error):
            outcome = "error \(error)"
        }
    }
}
