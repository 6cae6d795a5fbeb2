// policy-bench: what loading the policies costs a one-shot command such as `appex run`:
// parsing every YAML file (`PolicySet.load`, what `appex policy check` does) against taking
// the compiled set from the cache (`PolicyCache.load`, a hit: fingerprint every file, read
// and decode the cache), and `PolicyLocator.load` (finding the shipped directory, then the
// cache), and that narrowed to one extension point (`PolicyLocator.load(only:)`: only the
// widget policy and the groups it names decoded, what `appex run` calls). Target (issue 11):
// ≤ 0.5 ms for the cached path.
// Then the seccomp program of the widget policy: built by libseccomp against read back from
// the same cache directory (SeccompProgramCache), what each `appex run` did before and does now.
//
//   make bench-policy        (or: cd Benchmarks && swift build -c release --product policy-bench &&
//                             .build/release/policy-bench [ITERATIONS])
import AppexPolicy
import AppexSandbox
import BenchSupport
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

let iterations = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 200
guard let shipped = PolicyLocator.shippedDirectory() else {
    FileHandle.standardError.write(Data("policy-bench: shipped policies not found; set APPEX_POLICIES\n".utf8))
    exit(1)
}
var template = Array("/tmp/appex-policy-bench-XXXXXX".utf8CString)
guard let made = mkdtemp(&template) else { exit(1) }
let cacheDir = String(cString: made)
setenv("APPEX_POLICY_CACHE", cacheDir, 1)
defer { _ = try? FileManager.default.removeItem(atPath: cacheDir) }

func measure<T>(_ body: () throws -> T) rethrows -> (Histogram<UInt64>, T) {
    var h = Histogram<UInt64>(highestTrackableValue: 10_000_000_000, numberOfSignificantValueDigits: .three)
    var last: T?
    for _ in 0..<iterations {
        let t0 = now()
        last = try body()
        h.record(now() - t0)
    }
    return (h, last!)
}

let (parse, parsed) = try measure { try PolicySet.load(directories: [shipped]) }
_ = try PolicyCache.load(directories: [shipped])  // writes the cache
let (cached, fromCache) = try measure { try PolicyCache.load(directories: [shipped]) }
let (located, _) = try measure { try PolicyLocator.load() }
let (narrowed, narrowSet) = try measure { try PolicyLocator.load(only: "com.apple.widget-extension") }
guard narrowSet == parsed.narrowed(to: "com.apple.widget-extension") else {
    FileHandle.standardError.write(Data("policy-bench: the narrowed read differs from the narrowed parse\n".utf8))
    exit(1)
}
guard parsed == fromCache else {
    FileHandle.standardError.write(Data("policy-bench: the cached set differs from the parsed one\n".utf8))
    exit(1)
}
let widget = EffectivePolicy(extensionPoint: "com.apple.widget-extension", in: parsed)
let rules = widget.syscallRules.map { SeccompRule($0.name, $0.action) }
let (built, program) = try measure { try SeccompCompiler.compileOrLoad(rules, cacheDirectory: nil).program }
_ = try SeccompCompiler.compileOrLoad(rules, cacheDirectory: cacheDir)  // writes it
let (stored, loaded) = try measure { try SeccompCompiler.compileOrLoad(rules, cacheDirectory: cacheDir) }
guard loaded.fromDisk, loaded.program == program else {
    FileHandle.standardError.write(Data("policy-bench: the stored seccomp program was not read back unchanged\n".utf8))
    exit(1)
}

func us(_ ns: UInt64) -> String { String(format: "%.0f", Double(ns) / 1000) }
print("policy-bench: \(shipped), \(iterations) loads each, µs")
print("                         p50     p90     p99")
for (name, h) in [
    ("parse every file", parse), ("cache hit", cached), ("locate + cache hit", located),
    ("locate + one point", narrowed), ("seccomp: libseccomp", built), ("seccomp: cache hit", stored),
] {
    print(
        name.padding(toLength: 20, withPad: " ", startingAt: 0)
            + [50.0, 90, 99].map { us(h.valueAtPercentile($0)).leftPadded(8) }.joined())
}
print(
    String(
        format: "locate + one point (appex run) = %.1f%% of a parse; target ≤ 500 µs (p50): %@",
        100 * Double(narrowed.valueAtPercentile(50)) / Double(parse.valueAtPercentile(50)),
        narrowed.valueAtPercentile(50) <= 500_000 ? "met" : "MISSED"))
print(
    String(
        format: "seccomp (widget policy, %d instructions): the stored program costs %.1f%% of a build",
        program.instructionCount, 100 * Double(stored.valueAtPercentile(50)) / Double(built.valueAtPercentile(50))))

extension String {
    func leftPadded(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}
