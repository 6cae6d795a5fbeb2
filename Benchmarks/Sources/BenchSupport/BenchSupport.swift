import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

// What every harness here shares: one clock, one histogram shape, the machine line.

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always) public func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// What the numbers were measured on, printed first: CPU model, CPUs, kernel, RAM.
public func machineLine() -> String {
    var u = utsname()
    uname(&u)
    let release = withUnsafeBytes(of: &u.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    func field(_ file: String, _ key: String) -> String? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix(key) }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces)
    }
    let model = field("/proc/cpuinfo", "model name") ?? "unknown CPU"
    let memory =
        field("/proc/meminfo", "MemTotal:").flatMap { Int($0.split(separator: " ").first ?? "") }
        .map { String(format: ", %.1f GiB RAM", Double($0) / 1_048_576) } ?? ""
    return "\(model), \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) CPUs, Linux \(release)\(memory)"
}

/// Nanosecond samples up to a minute, three significant digits.
public func newHistogram() -> Histogram<UInt64> {
    Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
}

/// A harness's options: `--NAME N` pairs, each N a positive count, NAME one of `names`.
/// Returns the counts given, or what is wrong (for the harness's own `fail`).
public func parseCounts(_ arguments: [String], names: [String]) -> Result<[String: Int], CountsError> {
    var counts: [String: Int] = [:]
    var rest = arguments[...]
    while let flag = rest.popFirst() {
        let name = String(flag.drop { $0 == "-" })
        guard flag.hasPrefix("--"), names.contains(name) else {
            return .failure(CountsError("unknown option \(flag) (\(names.map { "--\($0) N" }.joined(separator: ", ")))"))
        }
        guard let value = rest.popFirst().flatMap(Int.init), value > 0 else { return .failure(CountsError("\(flag) wants a positive count")) }
        counts[name] = value
    }
    return .success(counts)
}

public struct CountsError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
