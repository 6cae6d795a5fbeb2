/// A property-list `<date>`: seconds since 2001-01-01 00:00:00 UTC, as both plist formats
/// store it (CoreFoundation's reference date). A type of its own so the bundle model does not
/// need Foundation's `Date` (`appex run` does not link Foundation: Docs/launch-sequence.md).
public struct PlistDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var secondsSinceReferenceDate: Double

    public init(secondsSinceReferenceDate: Double) {
        self.secondsSinceReferenceDate = secondsSinceReferenceDate
    }

    /// Days from 1970-01-01 to 2001-01-01.
    static let referenceDay: Int64 = 11_323

    public static func < (a: PlistDate, b: PlistDate) -> Bool {
        a.secondsSinceReferenceDate < b.secondsSinceReferenceDate
    }

    /// The XML plist form, `YYYY-MM-DDTHH:MM:SSZ`, whole seconds; nil when it has none.
    public init?(iso8601 text: Substring) {
        let b = Array(text.utf8)
        guard b.count == 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ from: Int, _ count: Int) -> Int64? {
            var n: Int64 = 0
            for c in b[from..<from + count] {
                guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
                n = n * 10 + Int64(c - UInt8(ascii: "0"))
            }
            return n
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day) - Self.referenceDay
        secondsSinceReferenceDate = Double(days * 86_400 + hour * 3_600 + minute * 60 + second)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (seconds rounded down), as Foundation's ISO 8601 formatter writes it.
    public var iso8601: String {
        let whole = Int64(secondsSinceReferenceDate.rounded(.down))
        var days = whole / 86_400
        var seconds = whole % 86_400
        if seconds < 0 {
            seconds += 86_400
            days -= 1
        }
        let (y, m, d) = Self.civil(fromDays: days + Self.referenceDay)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var year = "\(y)"
        while year.count < 4 { year = "0" + year }
        return "\(year)-\(two(m))-\(two(d))T\(two(seconds / 3_600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))Z"
    }

    public var description: String { iso8601 }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil-calendar algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The inverse of `daysFromCivil`.
    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
