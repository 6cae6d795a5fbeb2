/// The few ELF header fields that tell whether an executable can run on this machine.
public struct ELFHeader: Sendable, Equatable {
    public var is64Bit: Bool
    public var littleEndian: Bool
    public var machine: UInt16

    /// `e_machine` of this build of Appex.
    public static var hostMachine: UInt16 {
        #if arch(x86_64)
        return 62
        #elseif arch(arm64)
        return 183
        #elseif arch(arm)
        return 40
        #elseif arch(i386)
        return 3
        #elseif arch(riscv64)
        return 243
        #else
        return 0
        #endif
    }

    public static func machineName(_ machine: UInt16) -> String {
        switch machine {
        case 3: "i386"
        case 8: "mips"
        case 20: "powerpc"
        case 21: "powerpc64"
        case 40: "arm"
        case 62: "x86_64"
        case 183: "aarch64"
        case 243: "riscv"
        default: "machine \(machine)"
        }
    }

    public static func parse(_ b: [UInt8]) -> ELFHeader? {
        guard b.count >= 20, b[0] == 0x7F, b[1] == 0x45, b[2] == 0x4C, b[3] == 0x46 else { return nil }
        let little = b[5] == 1
        let machine = little ? UInt16(b[18]) | UInt16(b[19]) << 8 : UInt16(b[18]) << 8 | UInt16(b[19])
        return ELFHeader(is64Bit: b[4] == 2, littleEndian: little, machine: machine)
    }

    /// Mach-O magic numbers (from the file's first bytes): a macOS/iOS binary copied over as-is.
    public static func isMachO(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        let magic = Array(bytes.prefix(4))
        let known: [[UInt8]] = [
            [0xFE, 0xED, 0xFA, 0xCE], [0xFE, 0xED, 0xFA, 0xCF], [0xCE, 0xFA, 0xED, 0xFE],
            [0xCF, 0xFA, 0xED, 0xFE], [0xCA, 0xFE, 0xBA, 0xBE],
        ]
        return known.contains(magic)
    }
}
