/// A 64-bit FNV-1a digest of an installed bundle tree, written `fnv1a64:<16 hex digits>`.
///
/// It tells whether the installed copy still holds the bytes that were installed (a disk
/// error, a stray edit). It is NOT cryptographic: anyone able to write the state directory can
/// forge a tree with the same digest. The copy is trusted because it is root-owned, not
/// because of this value.
public struct ContentDigest: Sendable, Hashable, CustomStringConvertible {
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    public private(set) var value: UInt64 = ContentDigest.offsetBasis

    public init() {}

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var h = value
        for byte in bytes {
            h ^= UInt64(byte)
            h = h &* Self.prime
        }
        value = h
    }

    mutating func update(byte: UInt8) {
        withUnsafeBytes(of: byte) { update($0) }
    }

    /// A string and its terminating NUL, so `"ab" + "c"` and `"a" + "bc"` differ.
    mutating func update(_ string: String) {
        var bytes = Array(string.utf8)
        bytes.append(0)
        bytes.withUnsafeBytes { update($0) }
    }

    mutating func update(_ number: UInt64) {
        withUnsafeBytes(of: number.littleEndian) { update($0) }
    }

    public var description: String {
        let hex = String(value, radix: 16)
        return "fnv1a64:" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
