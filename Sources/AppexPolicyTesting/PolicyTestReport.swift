import AppexCommandSupport
import Foundation

/// The three forms of `appex test-policy`'s report: a line per case, JSON, JUnit XML.
package enum PolicyTestReport {
    /// `PASS suite: name: expected …; observed …` (a failure adds why).
    package static func line(_ r: PolicyTestResult) -> String {
        let v = r.verdict
        var s = "\(v.passed ? "PASS" : "FAIL") \(r.suite): \(r.name): expected \(r.expected); observed \(v.observed)"
        if let note = v.note { s += v.passed ? " (\(note))" : " -- \(note)" }
        return s
    }

    package static func summary(_ results: [PolicyTestResult]) -> String {
        let passed = results.filter(\.verdict.passed).count
        return "\(passed) passed, \(results.count - passed) failed"
    }

    package static func json(_ results: [PolicyTestResult], notes: [String]) -> [String: Any] {
        let passed = results.filter(\.verdict.passed).count
        return [
            "passed": passed,
            "failed": results.count - passed,
            "notes": notes,
            "cases": results.map { r -> [String: Any] in
                [
                    "suite": r.suite, "name": r.name, "file": r.file.jsonOrNull, "line": r.line.jsonOrNull,
                    "extensionPoint": r.extensionPoint.jsonOrNull, "expected": r.expected,
                    "observed": r.verdict.observed, "passed": r.verdict.passed,
                    "note": r.verdict.note.jsonOrNull, "milliseconds": Int(r.milliseconds),
                ]
            },
        ]
    }

    /// JUnit XML as CI systems read it: a testsuite per file, a testcase per case, a
    /// failure element carrying expected, observed and why.
    package static func junit(_ results: [PolicyTestResult]) -> String {
        var suites: [(String, [PolicyTestResult])] = []
        for r in results {
            if let i = suites.firstIndex(where: { $0.0 == r.suite }) { suites[i].1.append(r) } else { suites.append((r.suite, [r])) }
        }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        let failures = results.filter { !$0.verdict.passed }.count
        xml += "<testsuites name=\"appex test-policy\" tests=\"\(results.count)\" failures=\"\(failures)\">\n"
        for (suite, cases) in suites {
            let f = cases.filter { !$0.verdict.passed }.count
            let seconds = Double(cases.map(\.milliseconds).reduce(0, +)) / 1000
            xml += "  <testsuite name=\"\(escape(suite))\" tests=\"\(cases.count)\" failures=\"\(f)\" time=\"\(seconds)\">\n"
            for r in cases {
                let attrs =
                    "classname=\"\(escape(suite))\" name=\"\(escape(r.name))\" time=\"\(Double(r.milliseconds) / 1000)\""
                    + (r.file.map { " file=\"\(escape($0))\"" } ?? "") + (r.line.map { " line=\"\($0)\"" } ?? "")
                if r.verdict.passed {
                    xml += "    <testcase \(attrs)/>\n"
                } else {
                    let message = "expected \(r.expected); observed \(r.verdict.observed)" + (r.verdict.note.map { ": \($0)" } ?? "")
                    xml += "    <testcase \(attrs)>\n      <failure message=\"\(escape(message))\">\(escape(line(r)))</failure>\n    </testcase>\n"
                }
            }
            xml += "  </testsuite>\n"
        }
        return xml + "</testsuites>\n"
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            // Control characters other than tab and newline are not allowed in XML 1.0.
            case _ where ch.value < 0x20 && ch != "\t" && ch != "\n": out += "?"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}
