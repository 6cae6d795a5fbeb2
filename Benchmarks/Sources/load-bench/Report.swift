import BenchSupport
import Foundation
import Histogram

func ms(_ ns: UInt64) -> String { String(format: "%.2f", Double(ns) / 1e6) }
func mib(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }

func histogram(_ samples: [Sample]) -> Histogram<UInt64> {
    var h = newHistogram()
    for s in samples { h.record(min(s.nanoseconds, 60_000_000_000)) }
    return h
}

/// One line per extension: how its requests ended (counted by kind) and how long they took.
func printOutcomes(_ samples: [Sample]) {
    print("  extension  requests  cold   p50 ms   p99 ms   max ms  outcomes")
    for behaviour in Behaviour.allCases {
        let mine = samples.filter { $0.behaviour == behaviour }
        var kinds: [String: Int] = [:]
        for s in mine { kinds[s.outcome, default: 0] += 1 }
        let h = histogram(mine)
        let outcomes = kinds.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let columns = [
            String(mine.count).leftPadded(9), String(mine.filter(\.cold).count).leftPadded(5),
            ms(h.valueAtPercentile(50)).leftPadded(8), ms(h.valueAtPercentile(99)).leftPadded(8), ms(h.max).leftPadded(8),
        ]
        print("  " + behaviour.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0) + " " + columns.joined(separator: " ") + "  " + outcomes)
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

/// p50/p99/max of the host-observed time, then p50/p99 of appexd's `total`, `roundTrip` and
/// `queue` phases, for `samples` (`of`: how many there were before picking these).
func printLatencies(_ label: String, _ samples: [Sample], of all: Int? = nil) {
    let host = histogram(samples)
    func phase(_ value: (Sample) -> UInt64?) -> String {
        var h = newHistogram()
        for s in samples { if let v = value(s) { h.record(v) } }
        return "\(ms(h.valueAtPercentile(50)))/\(ms(h.valueAtPercentile(99)))"
    }
    print(
        "  " + label.padding(toLength: 31, withPad: " ", startingAt: 0)
            + " p50 \(ms(host.valueAtPercentile(50)))  p99 \(ms(host.valueAtPercentile(99)))  max \(ms(host.max))"
            + " | total \(phase(\.total)) | roundTrip \(phase(\.roundTrip)) | queue \(phase { $0.queue })"
            + "  (\(samples.count)\(all.map { " of \($0)" } ?? ""))")
}
