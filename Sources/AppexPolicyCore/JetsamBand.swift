/// A jetsam priority band, modelled on XNU's `JETSAM_PRIORITY_*` (×10, as in DESIGN.md):
/// lower bands die first when memory runs short.
public struct JetsamBand: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var value: Int

    public init?(value: Int) {
        guard Self.named.contains(where: { $0.1 == value }) else { return nil }
        self.value = value
    }

    public static func < (a: JetsamBand, b: JetsamBand) -> Bool { a.value < b.value }

    /// XNU's bands, by the name policies use.
    public static let named: [(String, Int)] = [
        ("idle", 0), ("aging", 10), ("background-opportunistic", 20), ("background", 30),
        ("mail", 40), ("phone", 50), ("ui-support", 80), ("foreground-support", 90),
        ("foreground", 100), ("audio-and-accessory", 120), ("conductor", 130),
        ("driver", 150), ("home", 160), ("executive", 170), ("important", 180), ("critical", 190),
    ]

    public init?(name: String) {
        guard let v = Self.named.first(where: { $0.0 == name })?.1 else { return nil }
        value = v
    }

    public static let idle = JetsamBand(name: "idle")!
    public static let foreground = JetsamBand(name: "foreground")!
    /// XNU's idle-deferred band, where an instance waits between its request and idle.
    public static let aging = JetsamBand(name: "aging")!

    public var name: String { Self.named.first { $0.1 == value }?.0 ?? String(value) }
    public var description: String { "\(name) (\(value))" }
}
