import BenchSupport
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

// Shared by the harness's parts: the clock, histograms and the report's rows.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("supervisor-bench: \(message)\n".utf8))
    exit(1)
}

/// One line of the report: a name, its samples (ns), and the row it is compared with.
struct Row {
    var name: String
    var histogram: Histogram<UInt64>
    var floor: String?

    var p50: Double { Double(histogram.valueAtPercentile(50)) }
    var p99: Double { Double(histogram.valueAtPercentile(99)) }
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }

/// µs with one decimal under 100 µs, whole µs above.
func micros(_ ns: UInt64) -> String {
    ns < 100_000 ? String(format: "%.1f", Double(ns) / 1000) : String(format: "%.0f", Double(ns) / 1000)
}

/// Prints a table: p50, p90, p99, max in µs, and p50 as a multiple of its floor row.
func printTable(_ title: String, _ rows: [Row]) {
    print("\n" + title)
    print(pad("", 52) + lpad("n", 6) + lpad("p50", 9) + lpad("p90", 9) + lpad("p99", 9) + lpad("max", 9) + lpad("p50 × floor", 13))
    for r in rows {
        let h = r.histogram
        var ratio = ""
        if let floorName = r.floor, let floor = rows.first(where: { $0.name == floorName }), floor.p50 > 0 {
            ratio = String(format: "%.2f×", r.p50 / floor.p50)
        }
        print(
            pad(r.name, 52) + lpad("\(h.totalCount)", 6) + lpad(micros(h.valueAtPercentile(50)), 9)
                + lpad(micros(h.valueAtPercentile(90)), 9) + lpad(micros(h.valueAtPercentile(99)), 9)
                + lpad(micros(h.max), 9) + lpad(ratio, 13))
    }
}

/// Empties the page cache, dentries and inodes, so the next launch reads its executable, the
/// Swift runtime it links and the sandbox's files from the disk.
func dropCaches() {
    sync()
    let fd = open("/proc/sys/vm/drop_caches", O_WRONLY)
    guard fd >= 0 else { fail("cannot open /proc/sys/vm/drop_caches (needs root): \(String(cString: strerror(errno)))") }
    _ = write(fd, "3", 1)
    close(fd)
}
