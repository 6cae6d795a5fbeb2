/// Upper bounds on every count the reader takes from the file.
///
/// A hostile file can claim a billion symbols; these keep the reader's memory and time
/// bounded whatever it claims. Each is far above what real programs use (a large C++
/// program has ~100k dynamic symbols) and a file over one is refused with its name.
public struct ELFLimits: Sendable {
    /// The kernel refuses a program header table above 64 KiB (fs/binfmt_elf.c).
    public var maxProgramHeaderBytes: UInt64 = 65536
    public var maxDynamicEntries: Int = 1 << 16
    public var maxNeeded: Int = 1024
    public var maxStringTableBytes: UInt64 = 64 << 20
    public var maxSymbols: Int = 1 << 21
    public var maxHashBuckets: Int = 1 << 22
    /// Relocation entries read to find the highest symbol index they name.
    public var maxRelocations: Int = 1 << 24
    /// Longest symbol name, library name or search path accepted.
    public var maxNameLength: Int = 1 << 14

    public init() {}
}
