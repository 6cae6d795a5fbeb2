import AppexHostClient
import AppexWire
import BenchSupport
import Foundation

/// Kills per crossing, and survivors: `bystanders` probes in the idle band hold `holdMiB`
/// each, then a foreground probe grows at the benchmark's pace to `growMiB` and holds. The
/// arithmetic says how many bystanders must die, in victim order, for the total to fall under
/// the critical line; appexd should kill exactly that many, and the kernel none (issue 31:
/// a held kernel signal killed on after the footprint was back under the line).
@MainActor final class CrossingSide {
    static let bystanderPoint = "dev.appex.bench.jetsam.bystander"
    static let bloaterPoint = "dev.appex.bench.jetsam.grower"

    let process: Process
    let logPath: String
    let client: HostClient
    let budget: Int64
    let bystanders: [String]
    let bloater = "dev.appex.bench.jetsam.crossing-grower"

    struct Crossing {
        var kills: Int
        var kernelKills: Int
        var survivors: Int
        var foregroundKilled: Bool
        /// The growth at which the footprint reached the critical line: the critical line less
        /// the footprint at rest (earlyoom's side is given the same).
        var crossBytes: Int64
        /// What the arithmetic allows: the fewest bystanders, in victim order, whose death
        /// brings the footprint at the end of the growth under the critical line.
        var fewest: Int
    }

    init(appexd: String, probe: String, root: String, budgetMiB: Int, bystanders count: Int) async {
        budget = Int64(budgetMiB) << 20
        let dir = root + "/crossing"
        logPath = dir + "/appexd.log"
        let policies = dir + "/policies/extension-points"
        do {
            try FileManager.default.createDirectory(atPath: policies, withIntermediateDirectories: true)
            for (point, band) in [(Self.bystanderPoint, "idle"), (Self.bloaterPoint, "foreground")] {
                try AppexSide.policy(point: point, idleBand: band)
                    .write(toFile: policies + "/\(band).yaml", atomically: true, encoding: .utf8)
            }
        } catch { fail("crossing policy: \(error)") }
        process = startAppexd(
            appexd,
            arguments: [
                "--state-dir", dir + "/state", "--policies", dir + "/policies",
                "--cgroup-parent", "appex-jetsam-crossing-\(getpid())", "--uid-range", "352000-352999",
                "--metrics", "off", "--memory-budget", "\(budgetMiB)MiB", "--no-system-pressure",
                // info: each instance's end, with its reason.
                "--log-level", "info",
            ], logPath: logPath, socket: dir + "/appexd.sock")
        bystanders = (0..<count).map { "dev.appex.bench.jetsam.bystander-\($0)" }
        do {
            client = try HostClient.connect(socketPath: dir + "/appexd.sock", identifier: "dev.appex.bench.jetsam-crossing")
            for (n, id) in bystanders.enumerated() {
                _ = try await client.install(
                    path: AppexSide.bundle(
                        probe: probe, root: dir, name: "Bystander\(n)", identifier: id,
                        point: Self.bystanderPoint))
                _ = try await client.enable(id)
            }
            _ = try await client.install(
                path: AppexSide.bundle(
                    probe: probe, root: dir, name: "Grower", identifier: bloater,
                    point: Self.bloaterPoint))
            _ = try await client.enable(bloater)
        } catch { fail("crossing appexd: \(error)") }
    }

    private func probe(_ id: String, _ action: String, _ arg: String) async throws -> ReceivedOutcome {
        let item = ExtensionItem(userInfo: ["probe.action": .string(action), "probe.arg": .string(arg)])
        return try await client.beginRequest(bundleIdentifier: id, items: [item])
    }

    private func ended(_ reason: String) -> Int {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.contains(" ended: \(reason):") }.count
    }

    /// How long the grower holds before its request completes, and the quiet after it (longer
    /// than a kernel signal's hold, one second) before the survivors are counted.
    static let holdMilliseconds = 300, quietMilliseconds = 1500

    /// One crossing: the bystanders fill up, the grower grows past the line and holds; after
    /// the quiet, who is left.
    func crossing(holdMiB: Int, growMiB: Int, stepKiB: Int, intervalMicros: Int) async throws -> Crossing {
        let killsBefore = ended("memory-pressure"), kernelBefore = ended("kernel-oom") + ended("per-process-limit")
        for id in bystanders {
            let o = try await probe(id, "allocate", "\(holdMiB)")
            guard o.outcome == .completed else { fail("bystander: \(o.message)") }
        }
        let atRest = Int64(try await client.jetsam().footprintBytes)
        _ = try await probe(bloater, "grow", "\(stepKiB),\(intervalMicros),\(growMiB),\(Self.holdMilliseconds)")
        try await Task.sleep(for: .milliseconds(Self.quietMilliseconds))
        let live = try await client.jetsam().entries
        // The fewest the order allows: bystanders first (idle band, longest in it first).
        let critical = Int64((Double(budget) * 0.90).rounded(.up))
        var total = atRest + Int64(growMiB) << 20, fewest = 0
        while total >= critical && fewest <= bystanders.count {
            total -= fewest < bystanders.count ? Int64(holdMiB) << 20 : Int64(growMiB) << 20
            fewest += 1
        }
        // Everyone ends before the next crossing: disabled, then enabled again.
        for id in bystanders + [bloater] {
            _ = try await client.disable(id)
            _ = try await client.enable(id)
        }
        for _ in 0..<200 where !(try await client.jetsam()).entries.isEmpty { try await Task.sleep(for: .milliseconds(25)) }
        return Crossing(
            kills: ended("memory-pressure") - killsBefore,
            kernelKills: ended("kernel-oom") + ended("per-process-limit") - kernelBefore,
            survivors: live.count, foregroundKilled: !live.contains { $0.bundleIdentifier == bloater },
            crossBytes: critical - atRest, fewest: fewest)
    }

    nonisolated func stop() {
        client.close()
        stopAppexd(process)
    }
}
