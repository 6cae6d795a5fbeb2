/// Writes `bplist00` files object by object, so tests can share one object among many
/// references the way a hostile file does (Foundation's writer shares only equal values it
/// meets again, never on request).
public struct BinaryPlistBuilder {
    public enum Object {
        case bool(Bool)
        case ascii(String)
        case utf16([UInt16])
        case data([UInt8])
        /// Indices of other objects.
        case array([Int])
        case dictionary([(key: Int, value: Int)])
    }

    public private(set) var objects: [Object] = []

    public init() {}

    /// Adds an object and returns its index, for later objects to refer to.
    @discardableResult
    public mutating func add(_ object: Object) -> Int {
        objects.append(object)
        return objects.count - 1
    }

    /// The file, with `top` as its root object; references are 4 bytes, offsets 8.
    public func bytes(top: Int) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(out.count)
            out += Self.encode(object)
        }
        let table = out.count
        for o in offsets { out += Self.bigEndian(o, size: 8) }
        out += [0, 0, 0, 0, 0, 0, 8, 4]
        for v in [objects.count, top, table] { out += Self.bigEndian(v, size: 8) }
        return out
    }

    private static func encode(_ object: Object) -> [UInt8] {
        switch object {
        case .bool(let b): return [b ? 0x09 : 0x08]
        case .ascii(let s): return header(0x5, s.utf8.count) + Array(s.utf8)
        case .utf16(let units): return header(0x6, units.count) + units.flatMap { bigEndian(Int($0), size: 2) }
        case .data(let d): return header(0x4, d.count) + d
        case .array(let refs): return header(0xA, refs.count) + refs.flatMap { bigEndian($0, size: 4) }
        case .dictionary(let pairs):
            return header(0xD, pairs.count) + pairs.flatMap { bigEndian($0.key, size: 4) }
                + pairs.flatMap { bigEndian($0.value, size: 4) }
        }
    }

    /// A marker with its count: in the low nibble, or in an 8-byte integer object after it.
    private static func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [kind << 4 | UInt8(count)] : [kind << 4 | 0x0F, 0x13] + bigEndian(count, size: 8)
    }

    private static func bigEndian(_ v: Int, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) }
    }

    /// An Info.plist that validates, with `Padding` holding `levels` arrays of `fanOut`
    /// references each, down to one string of `stringBytes`: a file of some kilobytes that
    /// expands to `stringBytes * fanOut^levels` bytes when every reference is copied.
    public static func expandingInfoPlist(
        identifier: String, executable: String, extensionPoint: String,
        stringBytes: Int, fanOut: Int, levels: Int
    ) -> [UInt8] {
        var b = BinaryPlistBuilder()
        var pairs: [(key: Int, value: Int)] = []
        for (k, v) in [
            ("CFBundleIdentifier", identifier), ("CFBundleExecutable", executable),
            ("CFBundlePackageType", "XPC!"), ("CFBundleVersion", "1"),
        ] {
            pairs.append((b.add(.ascii(k)), b.add(.ascii(v))))
        }
        let point = b.add(.dictionary([(b.add(.ascii("NSExtensionPointIdentifier")), b.add(.ascii(extensionPoint)))]))
        pairs.append((b.add(.ascii("NSExtension")), point))
        var shared = b.add(.ascii(String(repeating: "x", count: stringBytes)))
        for _ in 0..<levels { shared = b.add(.array(Array(repeating: shared, count: fanOut))) }
        pairs.append((b.add(.ascii("Padding")), shared))
        let top = b.add(.dictionary(pairs))
        return b.bytes(top: top)
    }
}
