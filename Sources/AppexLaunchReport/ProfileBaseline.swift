import AppexCommandSupport
import Foundation

/// `appex profile --baseline FILE`: an earlier run's `--json` output, compared phase by phase
/// with this run, side by side (Xcode Organizer's comparison of two builds): p50 and p99
/// before and now, and now over before.
package struct ProfileBaseline {
    struct Phase {
        var p50: UInt64
        var p99: UInt64
        var count: Int
    }

    let file: String
    let bundleIdentifier: String
    let version: String?
    let mode: String
    let phases: [String: Phase]

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads `path`; the error names the file and the key that is missing or wrong.
    package static func load(_ path: String) throws -> ProfileBaseline {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw Problem(description: "--baseline \(path): cannot read it: \(error.localizedDescription)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Problem(description: "--baseline \(path): not a JSON object (write one with appex profile --json)")
        }
        func want<T>(_ key: String, _ type: T.Type) throws -> T {
            guard let v = object[key] as? T else {
                throw Problem(description: "--baseline \(path): \(key) is missing or not \(T.self) (is it appex profile --json output?)")
            }
            return v
        }
        let phasesObject = try want("phases", [String: Any].self)
        var phases: [String: Phase] = [:]
        for (name, value) in phasesObject {
            guard let p = value as? [String: Any], let p50 = p["p50"] as? Int, let p99 = p["p99"] as? Int,
                let count = p["count"] as? Int, p50 >= 0, p99 >= 0
            else {
                throw Problem(description: "--baseline \(path): phases.\(name) needs p50, p99 and count (non-negative integers)")
            }
            phases[name] = Phase(p50: UInt64(p50), p99: UInt64(p99), count: count)
        }
        return ProfileBaseline(
            file: path, bundleIdentifier: try want("bundleIdentifier", String.self),
            version: object["version"] as? String, mode: try want("mode", String.self), phases: phases)
    }

    struct Row {
        var phase: String
        var before: Phase
        var now: LatencySummary
        var p50Ratio: Double { Double(now.p50) / Double(max(before.p50, 1)) }
        var p99Ratio: Double { Double(now.p99) / Double(max(before.p99, 1)) }
    }

    /// The phases both runs have, in this run's order.
    func rows(_ run: ProfileSamples) -> [Row] {
        run.phaseNames.compactMap { name in
            guard let before = phases[name] else { return nil }
            let now = run.summary(name)
            return now.isEmpty ? nil : Row(phase: name, before: before, now: now)
        }
    }

    /// What differs between the two runs besides the code (said above the table).
    func caveats(_ run: ProfileSamples) -> [String] {
        var out: [String] = []
        if bundleIdentifier != run.bundleIdentifier { out.append("the baseline is of \(bundleIdentifier), this run of \(run.bundleIdentifier)") }
        let mode = run.warm ? "warm" : "cold"
        if self.mode != mode { out.append("the baseline's launches were \(self.mode), these are \(mode)") }
        return out
    }

    static func ratio(_ r: Double) -> String { String(format: "%.2f×", r) }

    var label: String { "\(file)" + (version.map { " (version \($0))" } ?? "") }

    func table(_ run: ProfileSamples) -> (headers: [String], rows: [[String]]) {
        (
            ["phase", "p50 before", "p50 now", "now/before", "p99 before", "p99 now", "now/before"],
            rows(run).map { r in
                [
                    r.phase, Micros.format(r.before.p50), Micros.format(r.now.p50), Self.ratio(r.p50Ratio),
                    Micros.format(r.before.p99), Micros.format(r.now.p99), Self.ratio(r.p99Ratio),
                ]
            }
        )
    }

    func human(_ run: ProfileSamples) -> [String] {
        var lines = ["", "Against the baseline \(label):"]
        lines += caveats(run).map { "  note: \($0)" }
        let t = table(run)
        lines += TextTable.render(headers: t.headers, rows: t.rows)
        return lines
    }

    func json(_ run: ProfileSamples) -> [String: Any] {
        var phases: [String: Any] = [:]
        for r in rows(run) {
            phases[r.phase] = [
                "p50Before": Int(r.before.p50), "p50": Int(r.now.p50), "p50Ratio": r.p50Ratio,
                "p99Before": Int(r.before.p99), "p99": Int(r.now.p99), "p99Ratio": r.p99Ratio,
            ]
        }
        return [
            "file": file, "bundleIdentifier": bundleIdentifier, "version": version.jsonOrNull, "mode": mode,
            "caveats": caveats(run), "phases": phases,
        ]
    }

    func html(_ run: ProfileSamples, _ page: inout HTMLPage) {
        page.heading("Against the baseline", level: 2, id: "baseline")
        page.paragraph(label + (caveats(run).isEmpty ? "" : " · " + caveats(run).joined(separator: "; ")), cssClass: "meta")
        let t = table(run)
        page.table(headers: t.headers, rows: t.rows, caption: "Now over before: below 1× is faster. Percentiles exact (nearest rank) in both runs.")
    }
}
