/// Where the loaded time goes: each well-behaved request's latency by how many well-behaved
/// requests (its own included) were in flight when it was sent. The hosts leave the slow
/// extension's instances in bursts, so requests arrive together on two CPUs; a latency that
/// grows with the crowd at its send is CPU queueing, not a fault elsewhere.
func printCrowding(_ samples: [Sample]) {
    let starts = samples.map(\.start).sorted(), ends = samples.map { $0.start + $0.nanoseconds }.sorted()
    /// How many of `sorted` are < t (or ≤ t when `inclusive`).
    func count(_ sorted: [UInt64], below t: UInt64, inclusive: Bool = false) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < t || (inclusive && sorted[mid] == t) { low = mid + 1 } else { high = mid }
        }
        return low
    }
    let buckets: [(String, ClosedRange<Int>)] = [("1", 1...1), ("2–4", 2...4), ("5–8", 5...8), ("9–16", 9...16), ("17+", 17...Int.max)]
    var grouped = Array(repeating: [Sample](), count: buckets.count)
    for s in samples {
        let inFlight = count(starts, below: s.start, inclusive: true) - count(ends, below: s.start, inclusive: true)
        if let i = buckets.firstIndex(where: { $0.1.contains(inFlight) }) { grouped[i].append(s) }
    }
    print("  by well-behaved requests in flight at its send (itself included):")
    for (i, bucket) in buckets.enumerated() where !grouped[i].isEmpty {
        let h = histogram(grouped[i])
        print(
            "    " + bucket.0.padding(toLength: 5, withPad: " ", startingAt: 0)
                + " \(String(grouped[i].count).leftPadded(6)) requests  p50 \(ms(h.valueAtPercentile(50)))  p99 \(ms(h.valueAtPercentile(99))) ms")
    }
}
