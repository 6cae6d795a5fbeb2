import AppexBinaryLint
import AppexELF
import AppexTestSupport
import Foundation
import Testing

/// The ELF reader on real compiler output: what it reads, and what it refuses and says so.
@Suite struct ELFReaderTests {
    func read(_ bytes: [UInt8]) throws(ELFError) -> ELFDynamicInfo { try ELFDynamicInfo.read(MemorySource(bytes)) }
    func names(_ info: ELFDynamicInfo) -> Set<String> { Set(info.imports.map(\.name)) }

    @Test func readsTheImportsOfACompiledProgram() throws {
        let info = try read(TestBinaries.bytes(TestBinaries.program))
        #expect(names(info).isSuperset(of: ["mount", "ptrace", "puts"]))
        #expect(info.needed.map { String(decoding: $0, as: UTF8.self) }.contains("libc.so.6"))
        #expect(info.interpreter?.hasPrefix("/") == true)
        #expect(!info.isStaticallyLinked)
        #expect(info.header.layout == ELFLayout(wordSize: .bits64, byteOrder: .little))
    }

    @Test func readsASharedLibrarysImportsThroughItsRelocations() throws {
        let info = try read(TestBinaries.bytes(TestBinaries.library))
        #expect(names(info).isSuperset(of: ["reboot", "getpid"]))
        #expect(info.interpreter == nil)
        #expect(info.header.type == .sharedObject)
    }

    @Test func aStaticProgramImportsNothing() throws {
        let info = try read(TestBinaries.bytes(TestBinaries.staticProgram))
        #expect(info.imports.isEmpty && info.needed.isEmpty)
        #expect(info.isStaticallyLinked)
    }

    @Test(arguments: [
        ("i386-unknown-linux-gnu", ELFLayout(wordSize: .bits32, byteOrder: .little)),
        ("armv7-unknown-linux-gnueabihf", ELFLayout(wordSize: .bits32, byteOrder: .little)),
        ("mips-unknown-linux-gnu", ELFLayout(wordSize: .bits32, byteOrder: .big)),
        ("powerpc64-unknown-linux-gnu", ELFLayout(wordSize: .bits64, byteOrder: .big)),
        ("aarch64-unknown-linux-gnu", ELFLayout(wordSize: .bits64, byteOrder: .little)),
    ])
    func readsOtherWordSizesAndByteOrders(target: String, layout: ELFLayout) throws {
        let info = try read(TestBinaries.bytes(try TestBinaries.crossLibrary(target)))
        #expect(info.header.layout == layout)
        #expect(names(info).contains("mount"))
    }

    @Test func readsThroughADescriptor() throws {
        let fd = open(TestBinaries.program, O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        var st = stat()
        #expect(fstat(fd, &st) == 0)
        let info = try ELFDynamicInfo.read(FileDescriptorSource(fd: fd, size: UInt64(st.st_size)))
        #expect(names(info).contains("mount"))
    }

    // MARK: refusals, each naming the structure and offset

    func refusal(_ bytes: [UInt8], limits: ELFLimits = ELFLimits()) -> ELFError? {
        do {
            _ = try ELFDynamicInfo.read(MemorySource(bytes), limits: limits)
            return nil
        } catch { return error }
    }

    @Test func aScriptIsNotELF() throws {
        let e = try #require(refusal(Array("#!/bin/sh\necho hi\n".utf8)))
        #expect(e.notELF)
        #expect(e.description.contains("no ELF magic"))
    }

    @Test func aTruncatedHeaderIsRefused() throws {
        let e = try #require(refusal(Array(TestBinaries.bytes(TestBinaries.program).prefix(40))))
        #expect(!e.notELF)
        #expect(e.description.contains("ELF header"), "\(e)")
    }

    @Test func anUnknownClassIsRefusedAtItsOffset() throws {
        var b = TestBinaries.bytes(TestBinaries.program)
        b[4] = 3
        let e = try #require(refusal(b))
        #expect(e.description == "ELF header at offset 0x4: EI_CLASS is 3, neither ELFCLASS32 (1) nor ELFCLASS64 (2)")
    }

    @Test func aRelocatableObjectIsRefused() throws {
        var elf = ELF64Layout(bytes: TestBinaries.bytes(TestBinaries.program))
        elf.set(16, 1, width: 2)
        #expect(refusal(elf.bytes)?.description.contains("ET_REL") == true)
    }

    @Test func aWrongProgramHeaderSizeIsRefused() throws {
        var elf = ELF64Layout(bytes: TestBinaries.bytes(TestBinaries.program))
        elf.set(54, 40, width: 2)
        #expect(refusal(elf.bytes)?.description == "ELF header at offset 0x36: e_phentsize is 40, not 56 (the size of a program header)")
    }

    @Test func programHeadersPastTheEndAreRefused() throws {
        var elf = ELF64Layout(bytes: TestBinaries.bytes(TestBinaries.program))
        elf.set(32, UInt64(elf.bytes.count - 8), width: 8)
        let e = try #require(refusal(elf.bytes))
        #expect(e.part == "program header table (e_phoff)" && e.message.contains("past the end of the file"), "\(e)")
    }

    @Test func aDynamicSectionWhoseOffsetAndAddressDisagreeIsRefused() throws {
        var elf = ELF64Layout(bytes: TestBinaries.bytes(TestBinaries.program))
        let ph = try #require(elf.dynamicHeader)
        elf.set(ph + 8, UInt64(elf.u64(ph + 8) - 16), width: 8)
        let e = try #require(refusal(elf.bytes))
        #expect(e.message.contains("disagrees with p_vaddr"), "\(e)")
    }

    @Test func aRepeatedStringTableIsRefused() throws {
        var elf = ELF64Layout(bytes: TestBinaries.bytes(TestBinaries.program))
        // Turn the entry after DT_STRTAB into a second DT_STRTAB.
        let strtab = try #require(elf.entry(tag: 5))
        let other = try #require(elf.dynamicEntries.first { $0 != strtab && elf.u64($0) != 0 && elf.u64($0) != 1 })
        elf.set(other, 5, width: 8)
        let e = try #require(refusal(elf.bytes))
        #expect(e.message.contains("DT_STRTAB appears again"), "\(e)")
    }

    @Test func aDynamicSectionWithoutItsTerminatorIsRefused() throws {
        var elf = ELF64Layout(bytes: TestBinaries.bytes(TestBinaries.program))
        for entry in elf.dynamicEntries where elf.u64(entry) == 0 { elf.set(entry, 21, width: 8) }  // DT_DEBUG
        let e = try #require(refusal(elf.bytes))
        #expect(e.message.contains("no DT_NULL entry"), "\(e)")
    }

    @Test func aStringTableRunningOutOfItsSegmentIsRefused() throws {
        var elf = ELF64Layout(bytes: TestBinaries.bytes(TestBinaries.program))
        let strsz = try #require(elf.entry(tag: 10))
        elf.set(strsz + 8, 1 << 24, width: 8)
        let e = try #require(refusal(elf.bytes))
        #expect(e.part.hasPrefix("string table") && e.message.contains("runs past the file contents"), "\(e)")
    }

    @Test func aSymbolNameOutsideTheStringTableIsRefused() throws {
        var elf = ELF64Layout(bytes: TestBinaries.bytes(TestBinaries.program))
        let strsz = try #require(elf.entry(tag: 10))
        elf.set(strsz + 8, 2, width: 8)  // the table shrinks to two bytes
        let e = try #require(refusal(elf.bytes))
        #expect(e.message.contains("outside the 2-byte string table"), "\(e)")
    }

    @Test func countsBeyondTheLimitsAreRefused() throws {
        var limits = ELFLimits()
        limits.maxSymbols = 3
        let e = try #require(refusal(TestBinaries.bytes(TestBinaries.program), limits: limits))
        #expect(e.message.contains("limit of 3"), "\(e)")
    }
}
