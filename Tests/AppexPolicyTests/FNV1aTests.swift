import Testing

@testable import AppexPolicy
@testable import AppexPolicyCore

/// FNV-1a 64 keys the caches on disk: every entry point gives the published digests.
@Suite struct FNV1aTests {
    // From the FNV reference test vectors.
    static let vectors: [(String, UInt64)] = [
        ("", 0xcbf2_9ce4_8422_2325), ("a", 0xaf63_dc4c_8601_ec8c),
        ("foobar", 0x8594_4171_f739_67e8),
    ]

    @Test func everyOverloadGivesTheReferenceDigest() {
        for (text, digest) in Self.vectors {
            let bytes = Array(text.utf8)
            #expect(FNV1a.of(text.utf8) == digest, "\(text)")
            #expect(FNV1a.of(bytes) == digest)
            #expect(FNV1a.of(([0] + bytes)[1...]) == digest, "a slice that does not start at 0")
            #expect(FNV1a.of(bytes.lazy.map { $0 }) == digest, "a generic sequence")
            var split = FNV1a()
            split.mix(Array(bytes.prefix(2)))
            split.mix(String(decoding: bytes.dropFirst(2), as: UTF8.self).utf8)
            #expect(split.value == digest, "mixed in pieces")
        }
    }

    /// Cache file names: 16 lowercase hex digits of the digest of the directory list.
    @Test func cacheFileNamesAreTheListsDigestInHex() {
        #expect(PrivateCacheFile.hex(0x1a) == "000000000000001a")
        #expect(PrivateCacheFile.hex(.max) == "ffffffffffffffff")
        #expect(PrivateCacheFile.hex(0x0123_4567_89ab_cdef) == "0123456789abcdef")
        #expect(PolicyFingerprint.nameHash(["/a", "/b/c"]) == FNV1a.of("/a\n/b/c".utf8))
        #expect(PolicyFingerprint.nameHash(["/only"]) == FNV1a.of("/only".utf8))
        #expect(PolicyFingerprint.nameHash([]) == FNV1a.of("".utf8))
    }

    /// The caches' payload digest sees any one changed byte, in the whole words and in the
    /// tail after them, and the payload's length.
    @Test func thePayloadDigestSeesEveryOneByteChange() {
        #expect(PrivateCacheFile.digest([][...]) == 0xcbf2_9ce4_8422_2325)
        let payload = (0..<37).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 7) }
        let reference = PrivateCacheFile.digest(payload[...])
        for i in payload.indices {
            for flip: UInt8 in [0x01, 0x80, 0xff] {
                var changed = payload
                changed[i] ^= flip
                #expect(PrivateCacheFile.digest(changed[...]) != reference, "byte \(i) ^ \(flip)")
            }
        }
        #expect(PrivateCacheFile.digest(payload.dropLast()) != reference)
        #expect(PrivateCacheFile.digest((payload + [0])[...]) != reference)
        // A slice is digested by its own bytes, wherever it starts.
        let shifted = [9, 9, 9] + payload
        #expect(PrivateCacheFile.digest(shifted[3...]) == reference)
    }
}
