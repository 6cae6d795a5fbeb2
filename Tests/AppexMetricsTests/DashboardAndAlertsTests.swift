import AppexSupervisor
import Foundation
import Testing

/// The shipped Grafana dashboard and alert rules ask only for what appexd exports: every
/// metric they name is in `MetricCatalog`, with labels it has; the rules pass promtool.
struct DashboardAndAlertsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let dashboard = root + "/Docs/grafana/appex-dashboard.json"
    static let alerts = root + "/Docs/prometheus/appex-alerts.yml"

    /// Labels every series has once scraped, or a histogram's buckets have.
    static let scrapeLabels: Set<String> = ["instance", "job"]

    /// Each `name{selector}` of appexd's metrics in `text`: the name and its selector's label names.
    static func references(in text: String) -> [(name: String, labels: [String])] {
        let pattern = /\b((?:appex|process)_[a-z_]+)(\{[^}]*\})?/
        return text.matches(of: pattern).map { m in
            let labels = (m.output.2.map(String.init) ?? "").matches(of: /([a-z_]+)\s*(?:=~|!~|!=|=)/).map { String($0.output.1) }
            return (String(m.output.1), labels)
        }
    }

    static func expectKnown(_ file: String) throws {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let refs = references(in: text)
        #expect(refs.count > 5, "\(file): no queries found")
        for ref in refs {
            var name = ref.name
            var extra = scrapeLabels
            for suffix in ["_bucket", "_count", "_sum"] where name.hasSuffix(suffix) {
                let base = String(name.dropLast(suffix.count))
                if MetricCatalog.byName[base]?.kind == .histogram {
                    name = base
                    if suffix == "_bucket" { extra.insert("le") }
                }
            }
            let definition = try #require(MetricCatalog.byName[name], "\(file): \(ref.name) is not a metric appexd exports")
            // bundle_id on kills is opt-in (appexd --kills-by-bundle); a selector on it matches the
            // series without it when the dashboard's Extension selector is at All (.*).
            if name == MetricCatalog.kills.name { extra.insert("bundle_id") }
            for label in ref.labels {
                #expect(definition.labels.contains(label) || extra.contains(label), "\(file): \(ref.name) has no label \(label)")
            }
        }
    }

    @Test func dashboardQueriesNameExportedMetrics() throws {
        try Self.expectKnown(Self.dashboard)
    }

    @Test func alertRulesNameExportedMetrics() throws {
        try Self.expectKnown(Self.alerts)
    }

    /// The "Kills" stat counts kills, not graceful idle exits; every kill panel follows the
    /// Extension selector.
    @Test func killPanels() throws {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.dashboard))) as? [String: Any]
        var exprs: [(title: String, expr: String)] = []
        func walk(_ panels: [[String: Any]]) {
            for p in panels {
                for t in p["targets"] as? [[String: Any]] ?? [] {
                    if let e = t["expr"] as? String { exprs.append((p["title"] as? String ?? "", e)) }
                }
                walk(p["panels"] as? [[String: Any]] ?? [])
            }
        }
        walk(json?["panels"] as? [[String: Any]] ?? [])
        let kills = exprs.filter { $0.expr.contains("appex_kills_total") }
        #expect(kills.count >= 3)
        for k in kills { #expect(k.expr.contains("bundle_id=~\"$bundle_id\""), "\(k.title)") }
        let stat = try #require(kills.first { $0.title == "Kills (range)" })
        #expect(stat.expr.contains("reason!=\"idle-exit\""))
    }

    @Test func promtoolChecksTheRules() throws {
        guard let r = try Promtool.run(["check", "rules", Self.alerts]) else { return }
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("SUCCESS: 9 rules found"), "\(r.output)")
    }
}
