import AppexBinaryLint
import AppexELF
import AppexPolicy
import AppexTestSupport
import Foundation
import Testing

/// Mutated ELF files: the reader must return or throw an `ELFError` for every one of them,
/// never trap, hang or read outside the file. A crash fails the whole test run.
///
/// Mutations are seeded (the same cases every run) and aimed where a parser is most easily
/// hurt: header fields, program headers and the dynamic section, set to boundary values.
@Suite struct ELFFuzzTests {
    /// SplitMix64: small, seeded, and good enough to pick mutations.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
    }

    static let interesting: [UInt64] = [
        0, 1, 2, 3, 7, 8, 16, 0x7f, 0x80, 0xff, 0x100, 0xfff, 0x1000, 0xffff, 0x10000,
        0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1_0000_0000, 0x7fff_ffff_ffff_ffff, .max, .max - 7,
    ]

    /// Offsets worth hitting in `bytes`: the header, the program headers and the dynamic
    /// section (found by the tests' own reading for 64-bit little-endian seeds).
    static func hotSpots(_ bytes: [UInt8]) -> [Int] {
        var spots = Array(0..<min(64, bytes.count))
        guard bytes.count >= 64, bytes[4] == 2, bytes[5] == 1 else { return spots + Array(0..<min(256, bytes.count)) }
        let elf = ELF64Layout(bytes: bytes)
        for ph in elf.programHeaders where ph + 56 <= bytes.count { spots += Array(ph..<ph + 56) }
        guard elf.dynamicHeader.map({ elf.u64($0 + 8) + elf.u64($0 + 32) <= bytes.count }) == true else { return spots }
        for entry in elf.dynamicEntries { spots += Array(entry..<entry + 16) }
        // The first bytes of the tables the dynamic section points at: hash tables, symbols,
        // strings, relocations (their addresses turned into offsets through PT_LOAD).
        let loads = elf.programHeaders.filter { elf.type(ofHeader: $0) == 1 }
        for tag in [4, 5, 6, 7, 23, 0x6fff_fef5] {
            guard let entry = elf.entry(tag: tag) else { continue }
            let address = elf.u64(entry + 8)
            guard let ph = loads.first(where: { address >= elf.u64($0 + 16) && address < elf.u64($0 + 16) + elf.u64($0 + 32) }) else { continue }
            let offset = address - elf.u64(ph + 16) + elf.u64(ph + 8)
            spots += Array(offset..<min(bytes.count, offset + 256))
        }
        return spots
    }

    static func mutate(_ seed: [UInt8], spots: [Int], _ random: inout Random) -> [UInt8] {
        var b = seed
        for _ in 0...random.below(6) {
            guard !b.isEmpty else { break }
            let useSpot = random.below(4) != 0
            let at = useSpot ? spots[random.below(spots.count)] : random.below(b.count)
            switch random.below(5) {
            case 0:  // one random byte
                if at < b.count { b[at] = UInt8(truncatingIfNeeded: random.next()) }
            case 1, 2:  // an aligned field set to a boundary value
                let width = [2, 4, 8][random.below(3)]
                let start = at - at % width
                var value = interesting[random.below(interesting.count)]
                if random.below(3) == 0 { value = UInt64(b.count) &+ UInt64(bitPattern: Int64(random.below(33) - 16)) }
                for i in 0..<width where start + i < b.count { b[start + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
            case 3:  // truncate
                b = Array(b.prefix(random.below(b.count + 1)))
            default:  // flip a bit
                if at < b.count { b[at] ^= 1 << UInt8(random.below(8)) }
            }
        }
        return b
    }

    static func seeds() throws -> [(String, [UInt8])] {
        [
            ("program", TestBinaries.bytes(TestBinaries.program)),
            ("library", TestBinaries.bytes(TestBinaries.library)),
            ("i386", TestBinaries.bytes(try TestBinaries.crossLibrary("i386-unknown-linux-gnu"))),
            ("ppc64", TestBinaries.bytes(try TestBinaries.crossLibrary("powerpc64-unknown-linux-gnu"))),
        ]
    }

    @Test func mutatedFilesNeverCrashTheReader() throws {
        var small = ELFLimits()
        small.maxSymbols = 64
        small.maxRelocations = 64
        small.maxStringTableBytes = 256
        var outcomes = (read: 0, refused: 0)
        for (index, (_, seed)) in try Self.seeds().enumerated() {
            var random = Random(state: 0xA11CE + UInt64(index))
            let spots = Self.hotSpots(seed)
            for i in 0..<5000 {
                let mutated = Self.mutate(seed, spots: spots, &random)
                do {
                    _ = try ELFDynamicInfo.read(MemorySource(mutated), limits: i % 5 == 0 ? small : ELFLimits())
                    outcomes.read += 1
                } catch {
                    #expect(!error.description.isEmpty)
                    outcomes.refused += 1
                }
            }
        }
        // Both outcomes happen: the mutations are neither all harmless nor all fatal.
        #expect(outcomes.read > 100 && outcomes.refused > 100, "\(outcomes)")
    }

    /// The same through the whole check, from files on disk: descriptors, the bundle walk.
    @Test func mutatedFilesNeverCrashTheCheck() throws {
        let policy = BinaryLintPolicy(EffectivePolicy(extensionPoint: "", in: try PolicyLocator.load()), extensionPoint: nil)
        let scratch = try ScratchDirectory("lint-fuzz")
        defer { scratch.remove() }
        let dir = scratch.path
        var random = Random(state: 0xF11E)
        let seed = TestBinaries.bytes(TestBinaries.program)
        let spots = Self.hotSpots(seed)
        for i in 0..<300 {
            let path = dir + "/mutant-\(i)"
            _ = FileManager.default.createFile(atPath: path, contents: Data(Self.mutate(seed, spots: spots, &random)))
            let report = BinaryLinter.lint(file: path, policy: policy)
            #expect(report.errors.count + report.objects.count >= 1, "\(report.errors)")
        }
    }
}
