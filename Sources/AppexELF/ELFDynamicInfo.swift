/// What the dynamic loader will do with an executable or shared library: the libraries it
/// needs, where it searches for them, and the symbols it imports.
///
/// Read the way the loader reads it - program headers, then the dynamic section through the
/// PT_LOAD mappings - never from section headers, which the loader ignores and which a file
/// can make say something else. Nothing here recurses on the file's data, and every count
/// is bounded (`ELFLimits`).
public struct ELFDynamicInfo: Sendable {
    public var header: ELFFileHeader
    /// PT_INTERP: the dynamic loader a dynamically linked executable names.
    public var interpreter: String?
    public var hasDynamicSection: Bool
    /// DT_NEEDED names, in order, as bytes.
    public var needed: [[UInt8]]
    /// DT_RUNPATH and DT_RPATH entries, split at ':'.
    public var runpath: [[UInt8]]
    public var rpath: [[UInt8]]
    public var imports: [ELFImport]

    /// No interpreter, no needed libraries, no imports: it makes its system calls itself, so
    /// there is nothing to read them from.
    public var isStaticallyLinked: Bool { interpreter == nil && needed.isEmpty && imports.isEmpty }

    public static func read(_ source: any ELFByteSource, limits: ELFLimits = ELFLimits()) throws(ELFError) -> ELFDynamicInfo {
        let header = try ELFFileHeader.read(source, limits: limits)
        let reader = ELFReader(source: source, layout: header.layout, limits: limits)
        let programs = try ELFProgramHeaders.read(reader, header: header)
        var info = ELFDynamicInfo(
            header: header, interpreter: nil, hasDynamicSection: programs.dynamic != nil,
            needed: [], runpath: [], rpath: [], imports: [])
        if let interp = programs.interpreter {
            info.interpreter = try interpreterPath(reader, interp)
        }
        guard let segment = programs.dynamic else { return info }
        let map = ELFAddressMap(loads: programs.loads)
        let dynamic = try ELFDynamicSection.read(reader, segment: segment, map: map)
        let strings = try ELFStringTable.read(reader, dynamic: dynamic, map: map)
        typealias D = ELFDynamicSection
        if strings.bytes.isEmpty && (!dynamic.needed.isEmpty || dynamic.value(D.dtRunpath) != nil || dynamic.value(D.dtRpath) != nil) {
            throw ELFError(
                "dynamic section (program header \(segment.index))", at: segment.offset,
                "names libraries or search paths but has no string table (DT_STRTAB)")
        }
        for (i, offset) in dynamic.needed.enumerated() {
            let name = try strings.name(at: offset, part: "DT_NEEDED \(i)")
            guard !name.isEmpty else { throw ELFError("DT_NEEDED \(i)", "the library name is empty") }
            info.needed.append(name)
        }
        if let offset = dynamic.value(D.dtRunpath) { info.runpath = split(try strings.name(at: offset, part: "DT_RUNPATH")) }
        if let offset = dynamic.value(D.dtRpath) { info.rpath = split(try strings.name(at: offset, part: "DT_RPATH")) }
        info.imports = try ELFDynamicSymbols.imports(reader, dynamic: dynamic, strings: strings, map: map)
        return info
    }

    static func interpreterPath(_ reader: ELFReader, _ segment: ELFSegment) throws(ELFError) -> String {
        let part = "PT_INTERP (program header \(segment.index))"
        guard segment.fileSize > 0, segment.fileSize <= UInt64(reader.limits.maxNameLength) else {
            throw ELFError(part, at: segment.offset, "the interpreter path is \(segment.fileSize) bytes")
        }
        let bytes = try reader.read(part, at: segment.offset, count: segment.fileSize).bytes
        guard let nul = bytes.firstIndex(of: 0) else {
            throw ELFError(part, at: segment.offset, "the interpreter path is not NUL-terminated")
        }
        return String(decoding: bytes[..<nul], as: UTF8.self)
    }

    static func split(_ list: [UInt8]) -> [[UInt8]] {
        if list.isEmpty { return [] }
        return list.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).map(Array.init)
    }
}
