import Foundation

/// The earlyoom side: each trial is one run of earlyoom-trial (its header says how earlyoom is
/// confined to the bloater), which prints earlyoom's output and one line of results.
struct EarlyoomSide {
    let trialExecutable: String
    let earlyoom: String

    struct Trial {
        var result: TrialResult
        /// MemAvailable before the growth, and earlyoom's SIGTERM line, KiB.
        var availableKiB: Int64
        var thresholdKiB: Int64
        /// earlyoom's own lines (its configuration, the kill).
        var said: [String]
        var meanTouch: UInt64
        /// How far the bloater grew before it died (its MemAvailable crossing moves with the
        /// machine's other work).
        var grownKiB: Int64
    }

    /// earlyoom's version line, e.g. "earlyoom v1.7".
    var version: String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: earlyoom)
        p.arguments = ["-v"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        guard (try? p.run()) != nil else { fail("cannot run \(earlyoom)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "earlyoom"
    }

    func trial(log: GrowLog, plan: GrowPlan, crossBytes: Int64, timeoutMilliseconds: Int) -> Trial {
        log.reset()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: trialExecutable)
        p.arguments = [earlyoom, log.path, plan.argument, "\(crossBytes / 1024)", "\(randomDelayMicros())", "\(timeoutMilliseconds)"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        do { try p.run() } catch { fail("cannot run \(trialExecutable): \(error)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let problem = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        guard p.terminationStatus == 0, let last = lines.last, last.hasPrefix("available_kib=") else {
            fail("earlyoom-trial failed (status \(p.terminationStatus)): \(problem)\(lines.joined(separator: "\n"))")
        }
        var fields: [String: String] = [:]
        for pair in last.split(separator: " ") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { fields[String(kv[0])] = String(kv[1]) }
        }
        let said = lines.filter { $0.hasPrefix("earlyoom: ") }.map { String($0.dropFirst(10)) }
        // Whatever earlyoom signalled must have been the bloater: it is the only process it sees
        // besides the trial's init, and it prefers it.
        for line in said where line.contains(" to process ") && !line.contains("\"jetsam-bloater\"") {
            fail("earlyoom signalled something other than the bloater: \(line)")
        }
        let death = fields["death_ns"].flatMap(UInt64.init).flatMap { $0 == 0 ? nil : $0 }
        let threshold = Int64(fields["threshold_kib"] ?? "") ?? 0
        let steps = log.steps()
        return Trial(result: result(steps.crossing(availableKiB: threshold), death: death),
                     availableKiB: Int64(fields["available_kib"] ?? "") ?? 0, thresholdKiB: threshold,
                     said: said, meanTouch: steps.meanTouch, grownKiB: Int64(steps.last?.bytes ?? 0) / 1024)
    }
}
