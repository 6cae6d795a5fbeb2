/// Reads `DT_RUNPATH`/`DT_RPATH` from a 64-bit little-endian ELF executable.
///
/// A Swift extension finds its runtime through its RUNPATH (`/opt/swift/usr/lib/swift/linux`
/// on toolchain installs), outside the policy's system paths; the view mounts those
/// directories read-only so the extension can start. `$ORIGIN` entries point into the
/// bundle, which is mounted anyway, and are skipped.
enum ELFRunpath {
    static func directories(ofExecutable path: String) -> [String] {
        guard let bytes = try? Sys.readFile(path) else { return [] }
        return parse(bytes)
    }

    static func parse(_ b: [UInt8]) -> [String] {
        guard b.count > 64, b[0] == 0x7f, b[1] == 0x45, b[2] == 0x4c, b[3] == 0x46,
              b[4] == 2 /* 64-bit */, b[5] == 1 /* little-endian */ else { return [] }
        func u16(_ o: Int) -> Int { o + 2 <= b.count ? Int(b[o]) | Int(b[o + 1]) << 8 : 0 }
        func u64(_ o: Int) -> Int {
            guard o >= 0, o + 8 <= b.count else { return 0 }
            var v: UInt64 = 0
            for i in 0..<8 { v |= UInt64(b[o + i]) << (8 * UInt64(i)) }
            return v > UInt64(Int.max) ? 0 : Int(v)
        }
        let phoff = u64(32), phentsize = u16(54), phnum = u16(56)
        guard phentsize >= 56, phnum < 256 else { return [] }
        var loads: [(vaddr: Int, offset: Int, size: Int)] = []
        var dynamic: (offset: Int, size: Int)?
        for i in 0..<phnum {
            let ph = phoff + i * phentsize
            guard ph + 56 <= b.count else { return [] }
            let type = Int(b[ph]) | Int(b[ph + 1]) << 8 | Int(b[ph + 2]) << 16 | Int(b[ph + 3]) << 24
            if type == 1 { loads.append((u64(ph + 16), u64(ph + 8), u64(ph + 32))) }  // PT_LOAD
            if type == 2 { dynamic = (u64(ph + 8), u64(ph + 32)) }  // PT_DYNAMIC
        }
        guard let dyn = dynamic else { return [] }
        var strtabAddr = 0
        var runpathOffsets: [Int] = []
        var o = dyn.offset
        while o + 16 <= min(b.count, dyn.offset + dyn.size) {
            let tag = u64(o), val = u64(o + 8)
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
            let start = strtab + off
            guard start >= 0, start < b.count else { continue }
            var end = start
            while end < b.count, b[end] != 0 { end += 1 }
            for dir in String(decoding: b[start..<end], as: UTF8.self).split(separator: ":") {
                let d = String(dir)
                if d.hasPrefix("/"), !d.contains("$"), !out.contains(d) { out.append(d) }
            }
        }
        return out
    }
}
