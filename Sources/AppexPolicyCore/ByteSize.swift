/// A memory size as people write it in policies: `120MiB`, `16 MiB`, `512KiB`, `1GB`, `4096`.
///
/// IEC units (KiB, MiB, GiB) are powers of 1024; SI units (KB, MB, GB) powers of 1000, as
/// their names say. Shipped policies use IEC units.
public struct ByteSize: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var bytes: Int64

    public init(bytes: Int64) { self.bytes = bytes }
    public static func mebibytes(_ n: Int64) -> ByteSize { ByteSize(bytes: n << 20) }

    public static func < (a: ByteSize, b: ByteSize) -> Bool { a.bytes < b.bytes }

    static let units: [(String, Int64)] = [
        ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30),
        ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000),
        ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("B", 1),
    ]

    /// Parses `text`, or returns nil with no guess: `12 apples` is not a size.
    public init?(parsing text: String) {
        let trimmed = text.trimmingBlanks()
        var digits = Substring(trimmed)
        var multiplier: Int64 = 1
        for (suffix, factor) in Self.units where trimmed.hasSuffix(suffix) {
            digits = trimmed.dropLast(suffix.count)
            multiplier = factor
            break
        }
        let number = digits.trimmingBlanks()
        guard !number.isEmpty, number.allSatisfy(\.isNumber), let n = Int64(number) else { return nil }
        let (product, overflow) = n.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { return nil }
        bytes = product
    }

    /// The largest exact IEC unit: `120MiB`, `1536KiB`, `100B`.
    public var description: String {
        for (suffix, factor) in [("GiB", Int64(1) << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where bytes >= factor && bytes % factor == 0 {
            return "\(bytes / factor)\(suffix)"
        }
        return "\(bytes)B"
    }
}
