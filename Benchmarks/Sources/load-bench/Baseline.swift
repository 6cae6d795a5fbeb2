import AppexHostClient
import AppexWire
import BenchSupport
import Foundation
import Histogram

/// The unloaded reference: one host, nothing else asking, round-robin over the well-behaved
/// extensions (instances already running): `count` round trips after `warmup` unmeasured.
func unloaded(_ client: HostClient, count: Int, warmup: Int = 200) async -> [Sample] {
    var samples: [Sample] = []
    let echoes = Behaviour.allCases.filter(\.wellBehaved)
    for i in 0..<(warmup + count) {
        let behaviour = echoes[i % echoes.count]
        let t0 = now()
        let result = await request(client, behaviour, items: behaviour.items(host: 0, k: i), deadline: .seconds(10))
        let elapsed = now() - t0
        let sample = Sample(behaviour, result, nanoseconds: elapsed)
        guard sample.outcome == "completed", !sample.cold else {
            fail("unloaded request to \(behaviour.rawValue) ended \(sample.outcome)\(sample.cold ? " (cold)" : "")")
        }
        if i >= warmup { samples.append(sample) }
    }
    return samples
}

/// Starts `instances` instances of every extension (the policy's maxInstances): that many
/// requests at once to each, which sleep long enough to overlap, so the loaded run meets warm
/// extensions as a long-running system would. One extension at a time (a connection may hold
/// 32 open requests).
func prewarm(_ client: HostClient, instances: Int) async {
    for behaviour in Behaviour.allCases {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<instances {
                group.addTask {
                    let item = ExtensionItem(userInfo: ["probe.action": .string("sleep"), "probe.arg": .string("300")])
                    _ = await request(client, behaviour, items: [item], deadline: .seconds(10))
                }
            }
        }
    }
}
