// activation-bench: evaluating each corpus activation rule (compiled once) against a
// 10-attachment request. Target: p50 ≤ 5 µs per rule, since a share sheet evaluates one rule per
// installed extension each time it opens.
//
//   cd Benchmarks && swift build -c release --scratch-path ../.build-bench-activation
//   ../.build-bench-activation/release/activation-bench [CORPUS_DIR] [ITERATIONS]
import AppexActivation
import AppexBundle
import BenchSupport
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
let corpus =
    arguments.count > 1
    ? arguments[1]
    : URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/corpus").standardizedFileURL.path
let iterations = arguments.count > 2 ? Int(arguments[2]) ?? 20_000 : 20_000

// The rules: every distinct predicate, plus every dictionary rule in the corpus plists.
var rules: [(name: String, rule: ActivationRule)] = []
do {
    let data = try Data(contentsOf: URL(fileURLWithPath: corpus + "/predicates.json"))
    let predicates = try JSONDecoder().decode([String].self, from: data)
    for (i, text) in predicates.enumerated() {
        rules.append(("predicate \(i)", try ActivationRule.compile(predicate: text)))
    }
    let dir = corpus + "/plists"
    for file in try FileManager.default.contentsOfDirectory(atPath: dir).sorted() where file.hasSuffix(".plist") {
        let info = try InfoPlist.load(path: dir + "/" + file)
        guard case .dictionary = info.extensionInfo?.activationRule ?? .none else { continue }
        if let rule = ActivationRule.compile(info.extensionInfo?.activationRule ?? .none).rule {
            rules.append((String(file.dropLast(".plist".count)), rule))
        }
    }
} catch {
    FileHandle.standardError.write(Data("activation-bench: cannot read corpus at \(corpus): \(error)\n".utf8))
    exit(1)
}

// A share-sheet-like request: one item, 10 attachments, most with two type identifiers.
let request = ActivationItems(extensionItems: [
    ActivationItem(
        attachments: [
            ActivationAttachment(registeredTypeIdentifiers: ["public.jpeg", "public.file-url"]),
            ActivationAttachment(registeredTypeIdentifiers: ["public.heic", "public.file-url"]),
            ActivationAttachment(registeredTypeIdentifiers: ["public.png"]),
            ActivationAttachment(registeredTypeIdentifiers: ["public.jpeg"]),
            ActivationAttachment(registeredTypeIdentifiers: ["com.apple.quicktime-movie", "public.file-url"]),
            ActivationAttachment(registeredTypeIdentifiers: ["public.url"]),
            ActivationAttachment(registeredTypeIdentifiers: ["com.adobe.pdf", "public.file-url"]),
            ActivationAttachment(registeredTypeIdentifiers: ["public.plain-text"]),
            ActivationAttachment(registeredTypeIdentifiers: ["public.vcard"]),
            ActivationAttachment(registeredTypeIdentifiers: ["com.apple.pkpass"]),
        ], attributedContentText: "Look at these")
])

let prepared: PreparedItems
do { prepared = try PreparedItems(request, types: .system) } catch { fatalError("\(error)") }

// Clock overhead, to read the numbers against.
var overhead = Histogram<UInt64>(highestTrackableValue: 1_000_000_000, numberOfSignificantValueDigits: .three)
for _ in 0..<iterations {
    let t0 = now()
    let t1 = now()
    _ = overhead.record(t1 - t0)
}

func measure(_ body: () throws -> Bool) rethrows -> (Histogram<UInt64>, Bool) {
    var h = Histogram<UInt64>(highestTrackableValue: 1_000_000_000, numberOfSignificantValueDigits: .three)
    var activated = false
    for _ in 0..<(iterations / 10) { activated = try body() }  // warm-up
    for _ in 0..<iterations {
        let t0 = now()
        let r = try body()
        let t1 = now()
        activated = r
        _ = h.record(t1 - t0)
    }
    return (h, activated)
}

print("activation-bench: \(rules.count) corpus rules × 10-attachment request, \(iterations) evaluations each")
print("clock overhead: p50 \(overhead.valueAtPercentile(50)) ns (included in the numbers below)")
print("target: p50 ≤ 5000 ns per rule evaluation (request prepared once, as a share sheet does)")
print("columns: activates(prepared) p50/p90/p99; evaluate(prepared) p50, which also builds the reason when false;")
print("         end-to-end p50: evaluate(ActivationItems), resolving the request's type identifiers each time")
print("")
func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
print(
    pad("rule", 36) + lpad("result", 7) + lpad("p50", 8) + lpad("p90", 8) + lpad("p99", 8) + lpad("reason p50", 12) + lpad("e2e p50", 10) + "  (ns)")
var all = Histogram<UInt64>(highestTrackableValue: 1_000_000_000, numberOfSignificantValueDigits: .three)
var worstP50: UInt64 = 0
do {
    for (name, rule) in rules {
        let (h, activated) = try measure { try rule.activates(prepared) }
        let (withReason, _) = try measure { try rule.evaluate(prepared).isActivated }
        let (e2e, _) = try measure { try rule.evaluate(request).isActivated }
        all.add(h)
        worstP50 = max(worstP50, h.valueAtPercentile(50))
        print(
            pad(name, 36) + lpad(activated ? "true" : "false", 7)
                + lpad("\(h.valueAtPercentile(50))", 8) + lpad("\(h.valueAtPercentile(90))", 8) + lpad("\(h.valueAtPercentile(99))", 8)
                + lpad("\(withReason.valueAtPercentile(50))", 12) + lpad("\(e2e.valueAtPercentile(50))", 10))
    }
} catch {
    print("evaluation failed: \(error)")
    exit(1)
}
print("")
print(
    "all rules: p50 \(all.valueAtPercentile(50)) ns, p90 \(all.valueAtPercentile(90)) ns, p99 \(all.valueAtPercentile(99)) ns; worst rule p50 \(worstP50) ns"
)
print(worstP50 <= 5_000 ? "target met: every rule's p50 ≤ 5 µs" : "TARGET MISSED: a rule's p50 is above 5 µs")
