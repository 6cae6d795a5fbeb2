#if canImport(Glibc)
import Glibc
#endif

/// The `DT_RUNPATH`/`DT_RPATH` entries of an executable, read with the bounds-checked reader.
///
/// The entries are the extension author's words, so they are hostile input: the view never
/// mounts a directory because a RUNPATH names it. `$ORIGIN` entries resolve inside the bundle,
/// which the view shows anyway; an absolute entry is honoured only when it lies inside a
/// system path the policy already shows (`RunpathCheck`), and refused otherwise.
///
/// Only the parts it needs are read (header, program headers, dynamic section, the two names),
/// through a descriptor the caller opened safely: executables are megabytes, and this runs
/// whenever a sandbox is built or a bundle validated.
public enum ELFRunpath {
    /// Every RUNPATH then RPATH entry, in order, once each, as written (`$ORIGIN/lib`,
    /// `/opt/x/lib`, …); none when the file is not an ELF file the reader can follow.
    public static func entries(fd: Int32) -> [String] {
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size > 0 else { return [] }
        return entries(FileDescriptorSource(fd: fd, size: UInt64(st.st_size)))
    }

    /// The same, from a whole file in memory.
    public static func parse(_ bytes: [UInt8]) -> [String] {
        entries(MemorySource(bytes))
    }

    static func entries(_ source: any ELFByteSource) -> [String] {
        do throws(ELFError) {
            var out: [String] = []
            for list in try searchPaths(source) {
                for entry in ELFDynamicInfo.split(list) where !entry.isEmpty {
                    let dir = String(decoding: entry, as: UTF8.self)
                    if !out.contains(dir) { out.append(dir) }
                }
            }
            return out
        } catch {
            return []
        }
    }

    /// The DT_RUNPATH and DT_RPATH strings, as bytes, in that order (each when present).
    static func searchPaths(_ source: any ELFByteSource, limits: ELFLimits = ELFLimits()) throws(ELFError) -> [[UInt8]] {
        let header = try ELFFileHeader.read(source, limits: limits)
        let reader = ELFReader(source: source, layout: header.layout, limits: limits)
        let programs = try ELFProgramHeaders.read(reader, header: header)
        guard let segment = programs.dynamic else { return [] }
        let map = ELFAddressMap(loads: programs.loads)
        let dynamic = try ELFDynamicSection.read(reader, segment: segment, map: map)
        var lists: [[UInt8]] = []
        for (tag, part) in [(ELFDynamicSection.dtRunpath, "DT_RUNPATH"), (ELFDynamicSection.dtRpath, "DT_RPATH")] {
            guard let offset = dynamic.value(tag) else { continue }
            let strings = try ELFStringTable.read(reader, dynamic: dynamic, map: map, around: offset)
            lists.append(try strings.name(at: 0, part: part))
        }
        return lists
    }
}
