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

    /// One run of earlyoom-trial in `mode`: earlyoom's lines, and the fields of its last line.
    private func run(_ mode: String, _ arguments: [String]) -> (said: [String], fields: [String: String]) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: trialExecutable)
        p.arguments = [mode, earlyoom] + arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        do { try p.run() } catch { fail("cannot run \(trialExecutable): \(error)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let problem = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        guard p.terminationStatus == 0, let last = lines.last, last.hasPrefix("available_kib=") else {
            fail("earlyoom-trial \(mode) failed (status \(p.terminationStatus)): \(problem)\(lines.joined(separator: "\n"))")
        }
        var fields: [String: String] = [:]
        for pair in last.split(separator: " ") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { fields[String(kv[0])] = String(kv[1]) }
        }
        let said = lines.filter { $0.hasPrefix("earlyoom: ") }.map { String($0.dropFirst(10)) }
        // Whatever earlyoom signalled must have been the trial's load: it is all it sees besides
        // the trial's init (its PID 1, which earlyoom never picks).
        for line in said where line.contains(" to process ") && !line.contains("\"jetsam-") {
            fail("earlyoom signalled something outside the trial's load: \(line)")
        }
        return (said, fields)
    }

    func trial(log: GrowLog, plan: GrowPlan, crossBytes: Int64, timeoutMilliseconds: Int) -> Trial {
        log.reset()
        let (said, fields) = run(
            "latency",
            [
                log.path, plan.argument, "\(crossBytes / 1024)", "\(randomDelayMicros())",
                "\(timeoutMilliseconds)",
            ])
        let death = fields["death_ns"].flatMap(UInt64.init).flatMap { $0 == 0 ? nil : $0 }
        let threshold = Int64(fields["threshold_kib"] ?? "") ?? 0
        let steps = log.steps()
        return Trial(
            result: result(steps.crossing(availableKiB: threshold), death: death),
            availableKiB: Int64(fields["available_kib"] ?? "") ?? 0, thresholdKiB: threshold,
            said: said, meanTouch: steps.meanTouch, grownKiB: Int64(steps.last?.bytes ?? 0) / 1024)
    }

    /// One crossing on earlyoom's side: what died, in order, and who is left.
    struct Crossing {
        /// jetsam-fg or jetsam-idle-N, in the order they died.
        var victims: [String]
        var survivors: Int
        var foregroundKilled: Bool { victims.contains("jetsam-fg") }
        /// Whether MemAvailable read at or under earlyoom's line at all (read every 10 ms).
        var crossed: Bool
        /// MemAvailable's last reading, less the line, KiB: under 0, earlyoom was still
        /// asked to kill when the trial ended.
        var lastOverLineKiB: Int64
        /// How far the foreground had grown when the growth stopped (its cap, or its death).
        var foregroundGrownKiB: Int64
    }

    /// `bystanders` idle processes hold `holdMiB` each, then a foreground grows by `plan` and
    /// holds; earlyoom's line is MemAvailable − `crossBytes`, read once the bystanders hold. Who
    /// died `settleMilliseconds` after the growth was planned to end.
    func crossing(log: GrowLog, plan: GrowPlan, crossBytes: Int64, bystanders: Int, holdMiB: Int, settleMilliseconds: Int) -> Crossing {
        log.reset()
        let (_, fields) = run(
            "crossing",
            [
                log.path, plan.argument, "\(crossBytes / 1024)", "\(bystanders)", "\(holdMiB)",
                "\(randomDelayMicros())", "\(settleMilliseconds)",
            ])
        let victims = fields.compactMap { key, value -> (String, UInt64)? in
            guard key.hasPrefix("jetsam-"), value.hasPrefix("killed:"), let at = value.split(separator: "@").last.flatMap({ UInt64($0) })
            else { return nil }
            return (key, at)
        }.sorted { $0.1 < $1.1 }.map(\.0)
        let threshold = Int64(fields["threshold_kib"] ?? "") ?? 0
        return Crossing(
            victims: victims, survivors: Int(fields["survivors"] ?? "") ?? 0,
            crossed: (UInt64(fields["crossed_ns"] ?? "") ?? 0) != 0,
            lastOverLineKiB: (Int64(fields["last_kib"] ?? "") ?? 0) - threshold,
            foregroundGrownKiB: Int64(log.steps().last?.bytes ?? 0) / 1024)
    }
}
