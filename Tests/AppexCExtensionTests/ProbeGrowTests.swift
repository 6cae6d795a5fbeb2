import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The probe's `grow` action, the jetsam benchmark's load (Sources/appex-probe-extension/grow.h):
/// timed steps written to a shared log file, memory held, and a plan that does not parse refused.
@Suite struct ProbeGrowTests {
    static let magic: UInt64 = 0x7772_6761_7865_7061  // "appexgrw"

    /// A log file as grow.h describes it: header (magic, capacity, count, reserved), then
    /// `capacity` steps of (start_ns, end_ns, bytes, available_kib).
    static func logFile(capacity: UInt64) throws -> Int32 {
        var bytes = [UInt8](repeating: 0, count: 32 + Int(capacity) * 32)
        for (i, v) in [magic, capacity].enumerated() {
            withUnsafeBytes(of: v.littleEndian) { bytes.replaceSubrange(i * 8..<i * 8 + 8, with: $0) }
        }
        return try AttachmentSource.file(bytes)
    }

    struct Step {
        var start, end, bytes, availableKiB: UInt64
        init(_ w: [UInt64], _ k: Int) {
            let at = 4 + k * 4
            (start, end, bytes, availableKiB) = (w[at], w[at + 1], w[at + 2], w[at + 3])
        }
    }

    static func words(_ fd: Int32, count: Int) -> [UInt64] {
        var words = [UInt64](repeating: 0, count: count)
        _ = words.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return words.map { UInt64(littleEndian: $0) }
    }

    @Test func growLogsEveryStepAndHoldsTheMemory() throws {
        let probe = try Probe.start()
        let log = try Self.logFile(capacity: 16)
        defer { close(log) }
        let before = try ProcStatus.residentKiB(probe.pid)
        var item = Probe.item("grow", "512,1000,4,0")  // 512 KiB every ms up to 4 MiB, no hold
        item.attachments = [AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: 0))]
        #expect(Probe.text(try probe.request(1, [item], descriptors: [log]), 1) == "grew 4 MiB, held 0 ms")
        let after = try ProcStatus.residentKiB(probe.pid)
        #expect(after - before >= 4 * 1024 - 64, "VmRSS \(before) -> \(after) KiB")

        let w = Self.words(log, count: 4 + 16 * 4)
        #expect(w[0] == Self.magic && w[1] == 16 && w[2] == 8, "header \(w[0..<4])")
        let steps: [Step] = (0..<9).map { Step(w, $0) }
        let kib: [UInt64] = steps.prefix(8).map { $0.bytes / 1024 }
        #expect(kib == [512, 1024, 1536, 2048, 2560, 3072, 3584, 4096])
        #expect(steps.prefix(8).allSatisfy { $0.start > 0 && $0.end >= $0.start && $0.availableKiB == 0 })
        // Paced from the first step: step k starts no earlier than k intervals after it.
        let first = steps[0].start
        for k in 0..<8 { #expect(steps[k].start >= first + UInt64(k) * 1_000_000, "step \(k)") }
        #expect(steps[8].start == 0, "nothing past the last step")
    }

    /// What appexd forwards now: a pipe. Each finished step arrives on it, in order.
    @Test func growWritesEachStepToAPipe() throws {
        let probe = try Probe.start()
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        var item = Probe.item("grow", "512,1000,2,0")  // 512 KiB every ms up to 2 MiB
        item.attachments = [AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: 0))]
        let reply = try probe.request(1, [item], descriptors: [fds[1]])
        close(fds[1])
        #expect(Probe.text(reply, 1) == "grew 2 MiB, held 0 ms")
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        var words = [UInt64](repeating: 0, count: 64)
        let n = words.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
        #expect(n == 4 * 32, "\(n) bytes: four steps of 32")
        let steps = (0..<4).map { Step([0, 0, 0, 0] + words.map { UInt64(littleEndian: $0) }, $0) }
        #expect(steps.map { $0.bytes / 1024 } == [512, 1024, 1536, 2048])
        #expect(steps.allSatisfy { $0.start > 0 && $0.end >= $0.start })
    }

    @Test func growWithoutALogStillGrows() throws {
        let probe = try Probe.start()
        #expect(Probe.text(try probe.request(1, [Probe.item("grow", "1024,0,2,0")]), 1) == "grew 2 MiB, held 0 ms")
    }

    @Test func aBadPlanOrLogIsRefused() throws {
        let probe = try Probe.start()
        for (id, arg) in [(UInt64(1), "1024,1000,4"), (2, "1024,1000,0,0"), (3, "8192,0,4,0"), (4, "x,1,1,1")] {
            let error = Probe.cancelError(try probe.request(id, [Probe.item("grow", arg)]), id)
            #expect(error?.code == Int64(EINVAL), "\(arg): \(String(describing: error))")
            #expect(error?.message?.hasPrefix("probe.action grow wants probe.arg ") == true, "\(String(describing: error))")
        }
        let notALog = try AttachmentSource.file(Array("not a grow log, just some text here....".utf8))
        defer { close(notALog) }
        var item = Probe.item("grow", "512,0,1,0")
        item.attachments = [AppexWire.Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: 0))]
        let error = Probe.cancelError(try probe.request(5, [item], descriptors: [notALog]), 5)
        #expect(error?.code == Int64(EINVAL) && error?.message?.contains("neither a grow log") == true, "\(String(describing: error))")
    }
}
