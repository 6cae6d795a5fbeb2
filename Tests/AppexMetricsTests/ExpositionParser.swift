/// A strict reader of the Prometheus text exposition format (version 0.0.4), written for these
/// tests so that what appexd serves is checked against the format rather than against the
/// library that wrote it. Strict beyond what Prometheus itself accepts where that catches a
/// bug: every sample belongs to a family with a `# TYPE` line, and each family's HELP, TYPE
/// and samples form one uninterrupted block.
///
/// Checked: metric and label names; HELP and TYPE once per family, before its samples; label
/// values with only the `\\`, `\"` and `\n` escapes; no label repeated, no series repeated;
/// sample values as floats (`+Inf`, `-Inf`, `NaN` included); counters not negative; each
/// histogram series with `_bucket` lines in increasing `le` order, cumulative counts, a
/// `+Inf` bucket equal to `_count`, and a `_sum`.
struct Exposition {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Family {
        var name: String
        var type: String
        var help: String?
        var samples: [Sample] = []
    }

    struct Problem: Error, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { "line \(line): \(message)" }
    }

    var families: [String: Family] = [:]

    /// Samples named `name` whose labels include every pair of `labels`.
    func samples(_ name: String, _ labels: [String: String] = [:]) -> [Sample] {
        let family = families[name] ?? families[Self.histogramBase(name) ?? ""]
        return family?.samples.filter { s in
            s.name == name && labels.allSatisfy { s.labels[$0.key] == $0.value }
        } ?? []
    }

    /// The sum of those samples' values (0 when there are none).
    func sum(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples(name, labels).reduce(0) { $0 + $1.value }
    }

    static let types: Set<String> = ["counter", "gauge", "histogram", "summary", "untyped"]

    static func parse(_ text: String) throws -> Exposition {
        var result = Exposition()
        guard !text.isEmpty else { return result }
        guard text.hasSuffix("\n") else { throw Problem(line: 0, message: "the text does not end with a line feed") }
        var current: String?  // the family whose block is open
        var closed = Set<String>()  // families whose block has ended
        var seenSeries = Set<String>()
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let line = String(raw)
            func fail(_ message: String) -> Problem { Problem(line: number, message: "\(message): \(line)") }
            if line.isEmpty { continue }
            // Enters `family`'s block, or fails when it was already closed.
            func enter(_ family: String) throws {
                guard current != family else { return }
                if let c = current { closed.insert(c) }
                guard !closed.contains(family) else { throw fail("\(family) resumes after another family") }
                current = family
            }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard parts.count >= 3, parts[0] == "#", parts[1] == "HELP" || parts[1] == "TYPE" else { continue }  // a comment
                let name = parts[2]
                guard isMetricName(name) else { throw fail("invalid metric name \(name)") }
                try enter(name)
                if parts[1] == "HELP" {
                    guard parts.count == 4 else { throw fail("HELP without text") }
                    let help = try reword(fail) { () throws(Bad) -> String in try unescape(parts[3], quotes: false) }
                    var family = result.families[name] ?? Family(name: name, type: "")
                    guard family.help == nil else { throw fail("second HELP for \(name)") }
                    guard family.samples.isEmpty else { throw fail("HELP after samples of \(name)") }
                    family.help = help
                    result.families[name] = family
                } else {
                    guard parts.count == 4, types.contains(parts[3]) else { throw fail("unknown TYPE") }
                    var family = result.families[name] ?? Family(name: name, type: "")
                    guard family.type.isEmpty else { throw fail("second TYPE for \(name)") }
                    guard family.samples.isEmpty else { throw fail("TYPE after samples of \(name)") }
                    family.type = parts[3]
                    result.families[name] = family
                }
                continue
            }
            let sample = try reword(fail) { () throws(Bad) -> Sample in try parseSample(line) }
            // The family: the sample's own name, or a histogram's or summary's base name.
            var familyName = sample.name
            if result.families[familyName]?.type.isEmpty != false, let base = histogramBase(sample.name),
                let type = result.families[base]?.type, type == "histogram" || (type == "summary" && !sample.name.hasSuffix("_bucket"))
            {
                familyName = base
            }
            guard var family = result.families[familyName], !family.type.isEmpty else {
                throw fail("sample without a TYPE line for its family")
            }
            try enter(familyName)
            if family.type == "histogram" {
                guard sample.name != familyName else { throw fail("histogram sample without _bucket, _sum or _count") }
                guard (sample.labels["le"] != nil) == sample.name.hasSuffix("_bucket") else {
                    throw fail("le belongs on _bucket samples, and only there")
                }
            }
            if family.type == "counter" && !(sample.value >= 0) { throw fail("negative or NaN counter") }
            let pairs: [String] = sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let series = sample.name + "{" + pairs.joined(separator: ",") + "}"
            guard seenSeries.insert(series).inserted else { throw fail("series given twice") }
            family.samples.append(sample)
            result.families[familyName] = family
        }
        for family in result.families.values where family.type == "histogram" {
            try checkHistogram(family)
        }
        return result
    }

    static func histogramBase(_ name: String) -> String? {
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            return String(name.dropLast(suffix.count))
        }
        return nil
    }

    /// Per label set (without `le`): buckets in increasing order, cumulative, ending in
    /// +Inf equal to _count; _sum present.
    static func checkHistogram(_ family: Family) throws {
        func key(_ labels: [String: String]) -> String {
            labels.filter { $0.key != "le" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }
        var buckets: [String: [(Double, Double)]] = [:]
        var counts: [String: Double] = [:], sums: [String: Double] = [:]
        for s in family.samples {
            let k = key(s.labels)
            if s.name.hasSuffix("_bucket") {
                guard let bound = parseValue(s.labels["le"]!) else {
                    throw Problem(line: 0, message: "\(family.name){\(k)}: le \(s.labels["le"]!) is not a number")
                }
                buckets[k, default: []].append((bound, s.value))
            } else if s.name.hasSuffix("_count") {
                counts[k] = s.value
            } else {
                sums[k] = s.value
            }
        }
        for (k, list) in buckets {
            let where_ = "\(family.name){\(k)}"
            for (a, b) in zip(list, list.dropFirst()) {
                guard a.0 < b.0 else { throw Problem(line: 0, message: "\(where_): le \(b.0) after \(a.0)") }
                guard a.1 <= b.1 else { throw Problem(line: 0, message: "\(where_): bucket counts not cumulative") }
            }
            guard let last = list.last, last.0 == .infinity else { throw Problem(line: 0, message: "\(where_): no +Inf bucket") }
            guard let count = counts[k], count == last.1 else { throw Problem(line: 0, message: "\(where_): +Inf bucket is not _count") }
            guard sums[k] != nil else { throw Problem(line: 0, message: "\(where_): no _sum") }
            guard list.allSatisfy({ $0.1 >= 0 && $0.1 == $0.1.rounded() }) else {
                throw Problem(line: 0, message: "\(where_): a bucket count is not a whole number")
            }
        }
        for k in Set(counts.keys).union(sums.keys) where buckets[k] == nil {
            throw Problem(line: 0, message: "\(family.name){\(k)}: _count or _sum without buckets")
        }
    }

    // MARK: pieces

    static func isMetricName(_ s: some StringProtocol) -> Bool {
        guard let first = s.unicodeScalars.first, first.isLetterOrUnderscore || first == ":" else { return false }
        return s.unicodeScalars.allSatisfy { $0.isLetterOrUnderscore || $0 == ":" || ("0"..."9").contains($0) }
    }

    static func isLabelName(_ s: some StringProtocol) -> Bool {
        guard let first = s.unicodeScalars.first, first.isLetterOrUnderscore else { return false }
        return !s.hasPrefix("__") && s.unicodeScalars.allSatisfy { $0.isLetterOrUnderscore || ("0"..."9").contains($0) }
    }

    /// Go's float syntax as Prometheus reads it, without hexadecimal.
    static func parseValue(_ s: String) -> Double? {
        switch s {
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default:
            guard !s.isEmpty, !s.lowercased().contains("x"), !s.lowercased().contains("n") else { return nil }
            return Double(s)
        }
    }

    /// A label value's or a HELP text's escapes: `\\`, `\n`, and in label values `\"`.
    static func unescape(_ s: String, quotes: Bool) throws(Bad) -> String {
        var out = ""
        var escaped = false
        for c in s {
            if escaped {
                switch c {
                case "\\": out.append("\\")
                case "n": out.append("\n")
                case "\"" where quotes: out.append("\"")
                default: throw Bad("invalid escape \\\(c)")
                }
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        if escaped { throw Bad("a backslash at the end") }
        return out
    }

    static func parseSample(_ line: String) throws(Bad) -> Sample {
        var rest = Substring(line)
        let name = rest.prefix { $0 != "{" && $0 != " " }
        guard isMetricName(name) else { throw Bad("invalid metric name \(name)") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let labelName = rest.prefix { $0 != "=" }
                guard isLabelName(labelName) else { throw Bad("invalid label name \(labelName)") }
                rest = rest.dropFirst(labelName.count)
                guard rest.hasPrefix("=\"") else { throw Bad("label \(labelName) without =\"") }
                rest = rest.dropFirst(2)
                // The value runs to the first quote that no backslash escapes.
                var raw = ""
                var escaped = false
                var closed = false
                while let c = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        raw.append(c)
                        escaped = false
                        continue
                    }
                    if c == "\\" {
                        raw.append(c)
                        escaped = true
                        continue
                    }
                    if c == "\"" {
                        closed = true
                        break
                    }
                    raw.append(c)
                }
                guard closed else { throw Bad("unterminated value of \(labelName)") }
                let v = try unescape(raw, quotes: true)
                guard labels.updateValue(v, forKey: String(labelName)) == nil else { throw Bad("label \(labelName) twice") }
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { throw Bad("expected , or }") }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw Bad("expected a space before the value") }
        let fields = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 1 || fields.count == 2 else { throw Bad("expected a value and at most a timestamp") }
        guard let value = parseValue(String(fields[0])) else { throw Bad("invalid value \(fields[0])") }
        if fields.count == 2 && Int64(fields[1]) == nil { throw Bad("invalid timestamp \(fields[1])") }
        return Sample(name: String(name), labels: labels, value: value)
    }
}

/// What a piece of a line got wrong; the caller adds the line.
struct Bad: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Runs `body`, turning its `Bad` into the caller's `Problem`.
func reword<T>(_ problem: (String) -> Exposition.Problem, _ body: () throws(Bad) -> T) throws -> T {
    do { return try body() } catch { throw problem(error.message) }
}

extension Unicode.Scalar {
    fileprivate var isLetterOrUnderscore: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) || self == "_" }
}
