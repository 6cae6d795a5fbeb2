import AppexWire
import Foundation
import Testing

@testable import appex_commands

/// `appex top`'s frame at the sizes terminals have: the extension's name first and whole at 80
/// columns, the other columns left out least useful first, no line wider than the window.
struct TopScreenTests {
    static func entry(_ id: String, instance: UInt64 = 1, footprint: UInt64 = 12 << 20) -> JetsamEntry {
        JetsamEntry(
            bundleIdentifier: id, instance: instance, pid: 4242, band: 100, state: "busy", footprintBytes: footprint,
            activeSoftLimitBytes: 24 << 20, activeHardLimitBytes: 30 << 20, inactiveSoftLimitBytes: 6 << 20,
            inactiveHardLimitBytes: 8 << 20, active: true, overSoftLimit: false, timeInBandMicros: 2_500_000,
            cpuMicros: 1000, lastLaunchMicros: 3200)
    }

    static func screen(width: Int, ids: [String] = ["com.example.photos.share-extension"]) -> TopScreen {
        let report = JetsamReport(
            level: "normal", budgetBytes: 256 << 20, footprintBytes: 12 << 20, availableBytes: nil,
            entries: ids.enumerated().map { entry($1, instance: UInt64($0 + 1)) })
        return TopScreen(
            report: report, cpuPercent: [:], socket: "/run/appex/appexd.sock", interval: 1, time: Date(),
            width: width, height: 40)
    }

    @Test(arguments: [40, 60, 80, 100, 120, 160, 240])
    func fitsTheWidthWithTheNameFirst(width: Int) {
        let s = Self.screen(width: width)
        let lines = s.lines().map(\.description)
        #expect(lines.allSatisfy { $0.count <= width }, "\(lines)")
        let header = lines.first { $0.hasPrefix("EXTENSION") }
        #expect(header != nil, "\(lines)")
        let row = lines.first { $0.contains("#1") } ?? ""
        if width >= 80 {
            #expect(row.hasPrefix("com.example.photos.share-extension#1"), "the whole name at \(width): \(row)")
        } else {
            #expect(row.hasPrefix("…") && row.contains("share-extension#1"), "the name's end at \(width): \(row)")
        }
        // PID, then the footprint, outlast the rest.
        #expect(header?.contains("PID") == true, "\(header ?? "")")
        if width >= 60 { #expect(header?.contains("FOOTPRINT") == true, "\(header ?? "")") }
    }

    @Test func columnsGoLeastUsefulFirst() {
        let at80 = Self.screen(width: 80).headerLine(Self.screen(width: 80).layout())
        #expect(at80.contains("CPU%") && at80.contains("USE%") && !at80.contains("LAUNCH"), "\(at80)")
        let wide = Self.screen(width: 240).headerLine(Self.screen(width: 240).layout())
        for title in TopScreen.columns.map(\.title) { #expect(wide.contains(title), "\(title): \(wide)") }
    }

    /// Through a pipe (no width): every column, the names padded to the longest.
    @Test func aPipeGetsEveryColumn() {
        let s = Self.screen(width: 0, ids: ["a.b", "com.example.long.identifier.widget"])
        let lines = s.lines().map(\.description)
        let rows = lines.filter { $0.contains("#") }
        #expect(rows.count == 2)
        // The short name is padded to the long one's width: the PID column starts at one place.
        #expect(
            rows.map { $0.range(of: "4242")?.lowerBound.utf16Offset(in: $0) ?? -1 }.allSatisfy {
                $0 == "com.example.long.identifier.widget#2".count + 2 + 3
            },
            "\(rows)")
        #expect(lines.first { $0.hasPrefix("EXTENSION") }?.contains("IN BAND") == true)
    }

    @Test func aStaleFrameSaysSo() {
        var s = Self.screen(width: 120)
        s.problem = "appexd stopped answering (gone); connecting again every 1.0s"
        #expect(s.lines().map(\.description).contains { $0.contains("appexd stopped answering") })
    }
}
