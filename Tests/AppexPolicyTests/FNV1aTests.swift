@testable import AppexPolicy
import Testing

/// FNV-1a 64 keys the caches on disk: every entry point gives the published digests.
@Suite struct FNV1aTests {
    // From the FNV reference test vectors.
    static let vectors: [(String, UInt64)] = [("", 0xcbf2_9ce4_8422_2325), ("a", 0xaf63_dc4c_8601_ec8c),
                                              ("foobar", 0x8594_4171_f739_67e8)]

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
}
