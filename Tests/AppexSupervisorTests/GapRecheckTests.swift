import Testing

@testable import AppexSupervisor

/// When the budget's and an instance's lines count as "charge reached, footprint not": the
/// one condition under which appexd looks again without a kernel event.
@Suite struct GapRecheckTests {
    static let mib: Int64 = 1 << 20
    static let line = 88 * mib

    @Test func aChargeJustUnderTheLineWithinThePerCPUStockCounts() {
        // The threshold fired at the line, then the per-CPU stock drained: usage reads 66 KiB
        // under it. Without the slack no look followed and the level stayed at warning.
        #expect(GapRecheck.inGap(line: Self.line, charged: Self.line - 66 * 1024, footprint: Self.line - 500 * 1024, slack: 512 * 1024))
        #expect(!GapRecheck.inGap(line: Self.line, charged: Self.line - 66 * 1024, footprint: Self.line - 500 * 1024, slack: 0))
    }

    @Test func farBelowTheLineOrWithTheFootprintPastItThereIsNoGap() {
        #expect(!GapRecheck.inGap(line: Self.line, charged: Self.line - 8 * Self.mib, footprint: Self.line - 9 * Self.mib, slack: 512 * 1024))
        #expect(!GapRecheck.inGap(line: Self.line, charged: Self.line + Self.mib, footprint: Self.line, slack: 512 * 1024))
        #expect(!GapRecheck.inGap(line: 0, charged: Self.line, footprint: 0, slack: 512 * 1024))
    }

    @Test func anInstancesOffsetMovesOnlyTheChargeSide() {
        // The instance's threshold sits at line + offset (its cache); its footprint line does not move.
        let offset = 4 * Self.mib
        #expect(!GapRecheck.inGap(line: Self.line, offset: offset, charged: Self.line + Self.mib, footprint: Self.line - Self.mib, slack: 0))
        #expect(GapRecheck.inGap(line: Self.line, offset: offset, charged: Self.line + offset, footprint: Self.line - Self.mib, slack: 0))
    }

    @Test func theSlackIsTheKernelsChargeBatchPerCPU() {
        #expect(GapRecheck.chargeSlack >= 64 * 4096)
        #expect(GapRecheck.chargeSlack % (64 * 4096) == 0)
    }
}
