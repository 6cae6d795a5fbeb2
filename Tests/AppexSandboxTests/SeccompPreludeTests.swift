import AppexPolicy
import Foundation
import Testing

@testable import AppexSandbox

#if canImport(Glibc)
import Glibc
#endif

/// The instructions before libseccomp's program that answer unknown syscall numbers, run by
/// the test interpreter over every number, and the shape of the whole filter they allow.
@Suite struct SeccompPreludeTests {
    static let enosys = SeccompBPF.errno(ENOSYS)
    /// What the stand-in "libseccomp program" below answers: anything the prelude passes on.
    static let passedOn: UInt32 = 0x7fff_1234

    func prelude(known: [Int32], x32: Bool) throws -> SeccompBPF {
        let bytes = try #require(
            SeccompPrelude.bytes(
                known: known, nativeArch: SeccompBPF.auditArchX86_64, x32: x32,
                unknownAction: Self.enosys))
        // A one-instruction program after it: `ret passedOn`.
        var program = bytes
        program += [0x06, 0, 0, 0]
        withUnsafeBytes(of: Self.passedOn.littleEndian) { program += $0 }
        return SeccompBPF(program)
    }

    @Test func gapsAreTheRunsOfUnknownNumbers() {
        #expect(SeccompPrelude.gaps([0, 1, 2, 5, 6, 9]).map { [$0.0, $0.1] } == [[3, 4], [7, 8]])
        #expect(SeccompPrelude.gaps([2, 3]).map { [$0.0, $0.1] } == [[0, 1]])
        #expect(SeccompPrelude.gaps([0, 1, 2]).isEmpty)
    }

    @Test(arguments: [true, false])
    func everyNumberGetsPassedOnOnlyWhenKnown(_ x32: Bool) throws {
        let known: [Int32] = [0, 1, 2, 3, 7, 8, 100, 101, 102, 300, 301, 460]
        let bpf = try prelude(known: known, x32: x32)
        for nr: Int32 in 0...1100 {
            #expect(try bpf.run(nr: nr) == (known.contains(nr) ? Self.passedOn : Self.enosys), "nr \(nr)")
        }
        #expect(try bpf.run(nr: -1) == Self.enosys, "what a tracer sets to skip a call")
        #expect(try bpf.run(nr: 0x3fff_ffff) == Self.enosys)
        // The x32 ABI is left to libseccomp's program (which kills it); elsewhere that bit means nothing.
        #expect(try bpf.run(nr: 0x4000_0000 | 1) == (x32 ? Self.passedOn : Self.enosys))
        #expect(try bpf.run(nr: 0x7fff_ffff) == (x32 ? Self.passedOn : Self.enosys))
        // Another architecture's numbers mean other calls: libseccomp's program decides (kills).
        for nr: Int32 in [0, 5, 200, 999] {
            #expect(try bpf.run(nr: nr, arch: SeccompBPF.auditArchI386) == Self.passedOn)
        }
    }

    @Test func aTableWithTooManyGapsIsRefusedNotMiscompiled() {
        // Every other number: 512 gaps, far past what 8-bit jump offsets can span.
        let sparse = (0..<1024).filter { $0 % 2 == 0 }.map(Int32.init)
        #expect(SeccompPrelude.bytes(known: sparse, nativeArch: SeccompBPF.auditArchX86_64, x32: true, unknownAction: Self.enosys) == nil)
    }

    /// The compiled filter: libseccomp holds rules only for the calls a policy judges, so a
    /// shipped policy's program is a few hundred instructions shorter than with an allow rule
    /// for each known number (it was 534 for the widget policy; the kernel's load time grows
    /// with it), and no `ret` of libseccomp's stand-in default survives.
    @Test func theFilterHoldsOnlyTheJudgedCallsAndNoStandIn() throws {
        let rules = try ShippedRules.rules("com.apple.widget-extension")
        let program = try SeccompCompiler.compile(rules)
        #expect(program.instructionCount < 250, "\(program.instructionCount) instructions")
        let bpf = SeccompBPF(program.bytes)
        #expect(!bpf.program.contains { $0.code == 0x06 && $0.k == SeccompCompiler.standInDefault })
        #expect(try bpf.run(nr: -1) == Self.enosys)
        let empty = SeccompBPF(try SeccompCompiler.compile([]).bytes)
        #expect(try empty.run(nr: try #require(SyscallNames.number("read"))) == SeccompBPF.allow)
        #expect(try empty.run(nr: 999) == Self.enosys)
        #expect(!empty.program.contains { $0.code == 0x06 && $0.k == SeccompCompiler.standInDefault })
    }
}
