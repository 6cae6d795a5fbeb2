import Testing

@testable import AppexCgroups

@Suite("cgroupfs formats")
struct ParseTests {
    @Test func limitsMaxAndNumbers() throws {
        #expect(try CgroupParse.limit("max\n") == nil)
        #expect(try CgroupParse.limit("16777216\n") == 16_777_216)
        #expect(try CgroupParse.limit("0") == 0)
        // v1 spells unlimited as PAGE_COUNTER_MAX pages.
        #expect(try CgroupParse.limit("9223372036854771712\n") == nil)
        #expect(throws: CgroupError.self) { try CgroupParse.limit("lots") }
        #expect(throws: CgroupError.self) { try CgroupParse.number("max") }
    }

    @Test func keyedFiles() {
        let events = "low 0\nhigh 12\nmax 40\noom 2\noom_kill 1\noom_group_kill 0\n"
        let e = CgroupParse.keyed(events)
        #expect(e == ["low": 0, "high": 12, "max": 40, "oom": 2, "oom_kill": 1, "oom_group_kill": 0])
        let oom = CgroupParse.keyed("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
        #expect(oom["oom_kill"] == 3)
        // Unknown shapes are skipped, not fatal.
        #expect(CgroupParse.keyed("weird line here\nanon 4096\n") == ["anon": 4096])
        // Runs of spaces separate as one; a value that is not a number, or no newline at the end.
        #expect(CgroupParse.keyed("a  5\n\nb x\nc -7") == ["a": 5, "c": -7])
    }

    @Test func procsAndControllers() {
        #expect(CgroupParse.pids("12\n345\n\n") == [12, 345])
        #expect(CgroupParse.pids("") == [])
        #expect(CgroupParse.pids(" 7\t\n8 \nx\n") == [7, 8])
        #expect(" \t12\n".trimmingWhitespace == "12" && " \n\t".trimmingWhitespace == "")
        #expect(CgroupParse.controllers("cpuset cpu io memory pids\n") == ["cpuset", "cpu", "io", "memory", "pids"])
        #expect(CgroupParse.controllers("\n") == [])
    }

    @Test func names() throws {
        for bad in ["", ".", "..", "a/b", "../x", "a..b", "a\0b", "cgroup.procs", "a\nb", "a\r\nb", "x..", String(repeating: "x", count: 201)] {
            #expect(throws: CgroupError.self, "\(bad.debugDescription)") { try CgroupManager.validate(name: bad) }
        }
        for good in ["com.example.share", "ext-1_2", "a.b.c", ".x", "x.", "cgroup", String(repeating: "x", count: 200)] {
            try CgroupManager.validate(name: good)
        }
        #expect(throws: CgroupError.self) { try CgroupManager(version: .v1, roots: .systemV1, parentName: "a/../b") }
        #expect(throws: CgroupError.self) { try CgroupManager(version: .v2, roots: .systemV1) }
    }

    @Test func footprintDefinitionV1() {
        let stat: [String: Int64] = [
            "cache": 10 * MiB, "rss": 3 * MiB, "shmem": 1 * MiB, "dirty": 2 * MiB,
            "writeback": 0, "mapped_file": 6 * MiB,
        ]
        let f = Footprint(stat: stat, version: .v1)
        #expect(f.total == 6 * MiB)
        #expect(f.cleanFile == 7 * MiB)
    }

    @Test func footprintDefinitionV2() {
        let stat: [String: Int64] = [
            "anon": 5 * MiB, "file": 20 * MiB, "shmem": 2 * MiB, "file_dirty": 1 * MiB,
            "file_writeback": 1 * MiB, "file_mapped": 12 * MiB,
        ]
        let f = Footprint(stat: stat, version: .v2)
        #expect(f.total == 9 * MiB)
        #expect(f.cleanFile == 16 * MiB)
    }

    @Test func pressureFormat() throws {
        let t = "some avg10=1.50 avg60=0.25 avg300=0.00 total=12345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7\n"
        let p = try MemoryPressureMonitor.parse(t)
        #expect(p[.some]?.avg10 == 1.5)
        #expect(p[.some]?.totalMicroseconds == 12345)
        #expect(p[.full]?.totalMicroseconds == 7)
    }
}
