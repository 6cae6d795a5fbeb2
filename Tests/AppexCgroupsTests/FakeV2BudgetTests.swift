import Foundation
import Testing

@testable import AppexCgroups

/// The memory budget's limits on v2, on the fake cgroupfs: `memory.high` (the throttle) and
/// `memory.max` (the kernel's hard limit, above it), and unlimited again with nil.
@Suite("budget limits on a fake cgroup2")
struct FakeV2BudgetTests {
    @Test func theParentGetsAThrottleAndAHardLimitAboveIt() throws {
        let fake = try FakeCgroup2()
        let m = try fake.manager()
        try m.setBudgetLimits(hard: 112 * MiB, high: 48 * MiB)
        #expect(try fake.get("appex/memory.high") == "50331648")
        #expect(try fake.get("appex/memory.max") == "117440512")
        try m.setBudgetLimits(hard: nil, high: nil)
        #expect(try fake.get("appex/memory.high") == "max" && fake.get("appex/memory.max") == "max")
    }
}
