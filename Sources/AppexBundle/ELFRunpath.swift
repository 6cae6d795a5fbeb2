#if canImport(Glibc)
import Glibc
#endif

/// Reads `DT_RUNPATH`/`DT_RPATH` from a 64-bit little-endian ELF executable.
///
/// The entries are the extension author's words, so they are hostile input: the view never
/// mounts a directory because a RUNPATH names it. `$ORIGIN` entries resolve inside the bundle,
/// which the view shows anyway; an absolute entry is honoured only when it lies inside a
/// system path the policy already shows (`RunpathCheck`), and refused otherwise.
///
/// Only the parts it needs are read (header, program headers, dynamic section, the strings),
/// through a descriptor the caller opened safely: executables are megabytes, and this runs
/// whenever a sandbox is built or a bundle validated.
public enum ELFRunpath {
    /// Every RUNPATH/RPATH entry, in order, as written (`$ORIGIN/lib`, `/opt/x/lib`, …).
    public static func entries(fd: Int32) -> [String] {
        parse { offset, count in
            guard offset >= 0, count > 0 else { return [] }
            var buf = [UInt8](repeating: 0, count: count)
            let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n > 0 ? Array(buf.prefix(n)) : []
        }
    }

    /// The same, from a whole file in memory.
    public static func parse(_ b: [UInt8]) -> [String] {
        parse { o, c in o >= 0 && o < b.count && c > 0 ? Array(b[o..<min(b.count, o + c)]) : [] }
    }

    /// `read(offset, count)` returns up to `count` bytes at `offset` (fewer at the end).
    static func parse(read: (Int, Int) -> [UInt8]) -> [String] {
        let h = read(0, 64)
        guard h.count == 64, h[0] == 0x7f, h[1] == 0x45, h[2] == 0x4c, h[3] == 0x46,
              h[4] == 2 /* 64-bit */, h[5] == 1 /* little-endian */ else { return [] }
        let phoff = u64(h, 32), phentsize = u16(h, 54), phnum = u16(h, 56)
        guard phentsize >= 56, phnum < 256 else { return [] }
        let phs = read(phoff, phnum * phentsize)
        guard phs.count == phnum * phentsize else { return [] }
        var loads: [(vaddr: Int, offset: Int, size: Int)] = []
        var dynamic: (offset: Int, size: Int)?
        for i in 0..<phnum {
            let ph = i * phentsize
            let type = u32(phs, ph)
            if type == 1 { loads.append((u64(phs, ph + 16), u64(phs, ph + 8), u64(phs, ph + 32))) }  // PT_LOAD
            if type == 2 { dynamic = (u64(phs, ph + 8), u64(phs, ph + 32)) }  // PT_DYNAMIC
        }
        guard let dyn = dynamic else { return [] }
        let entries = read(dyn.offset, min(dyn.size, 1 << 16))
        var strtabAddr = 0
        var runpathOffsets: [Int] = []
        var o = 0
        while o + 16 <= entries.count {
            let tag = u64(entries, o), val = u64(entries, o + 8)
            if tag == 0 { break }
            if tag == 5 { strtabAddr = val }  // DT_STRTAB
            if tag == 29 || tag == 15 { runpathOffsets.append(val) }  // DT_RUNPATH, DT_RPATH
            o += 16
        }
        guard strtabAddr != 0,
              let seg = loads.first(where: { strtabAddr >= $0.vaddr && strtabAddr < $0.vaddr + $0.size }) else { return [] }
        let strtab = strtabAddr - seg.vaddr + seg.offset
        var out: [String] = []
        for off in runpathOffsets {
            let bytes = read(strtab + off, 4096)
            let value = bytes.prefix { $0 != 0 }
            for dir in String(decoding: value, as: UTF8.self).split(separator: ":") {
                let d = String(dir)
                if !out.contains(d) { out.append(d) }
            }
        }
        return out
    }

    private static func u16(_ b: [UInt8], _ o: Int) -> Int { o >= 0 && o + 2 <= b.count ? Int(b[o]) | Int(b[o + 1]) << 8 : 0 }
    private static func u32(_ b: [UInt8], _ o: Int) -> Int { o >= 0 && o + 4 <= b.count ? u16(b, o) | u16(b, o + 2) << 16 : 0 }
    private static func u64(_ b: [UInt8], _ o: Int) -> Int {
        guard o >= 0, o + 8 <= b.count else { return 0 }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(b[o + i]) << (8 * UInt64(i)) }
        return v > UInt64(Int.max) ? 0 : Int(v)
    }
}
