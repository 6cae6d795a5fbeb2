/// Runs a compiled seccomp program over a `struct seccomp_data`, the way the kernel's
/// classic-BPF interpreter does, so tests can ask what the filter answers for any syscall
/// number and argument without loading it. The kernel tests load the same bytes for real.
struct SeccompBPF {
    struct Instruction {
        var code: UInt16
        var jt: UInt8
        var jf: UInt8
        var k: UInt32
    }

    enum Failure: Error, CustomStringConvertible {
        case badInstruction(pc: Int, code: UInt16)
        case outOfBounds(pc: Int)
        var description: String {
            switch self {
            case .badInstruction(let pc, let code): "unsupported BPF instruction 0x\(String(code, radix: 16)) at \(pc)"
            case .outOfBounds(let pc): "BPF program runs off its end or reads outside seccomp_data at \(pc)"
            }
        }
    }

    static let auditArchX86_64: UInt32 = 0xC000_003E
    static let auditArchI386: UInt32 = 0x4000_0003
    static let auditArchAArch64: UInt32 = 0xC000_00B7
    static var nativeArch: UInt32 {
        #if arch(arm64)
        auditArchAArch64
        #else
        auditArchX86_64
        #endif
    }

    let program: [Instruction]

    init(_ bytes: [UInt8]) {
        // struct sock_filter in host (little-endian) order: u16 code, u8 jt, u8 jf, u32 k.
        program = stride(from: 0, to: bytes.count, by: 8).map { i in
            Instruction(
                code: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8, jt: bytes[i + 2], jf: bytes[i + 3],
                k: UInt32(bytes[i + 4]) | UInt32(bytes[i + 5]) << 8 | UInt32(bytes[i + 6]) << 16 | UInt32(bytes[i + 7]) << 24)
        }
    }

    /// The SECCOMP_RET_* value for one call.
    func run(nr: Int32, args: [UInt64] = [], arch: UInt32 = SeccompBPF.nativeArch) throws -> UInt32 {
        // struct seccomp_data as 32-bit words: nr, arch, ip (2), args[6] (low word first).
        var data: [UInt32] = [UInt32(bitPattern: nr), arch, 0, 0]
        for i in 0..<6 {
            let a = i < args.count ? args[i] : 0
            data += [UInt32(truncatingIfNeeded: a), UInt32(truncatingIfNeeded: a >> 32)]
        }
        var a: UInt32 = 0, x: UInt32 = 0
        var mem = [UInt32](repeating: 0, count: 16)
        var pc = 0
        while true {
            guard pc < program.count else { throw Failure.outOfBounds(pc: pc) }
            let ins = program[pc]
            pc += 1
            let src = ins.code & 0x08 != 0 ? x : ins.k  // BPF_X or BPF_K
            switch ins.code {
            case 0x20:  // BPF_LD | BPF_W | BPF_ABS
                guard ins.k % 4 == 0, Int(ins.k / 4) < data.count else { throw Failure.outOfBounds(pc: pc - 1) }
                a = data[Int(ins.k / 4)]
            case 0x00: a = ins.k  // BPF_LD | BPF_IMM
            case 0x01: x = ins.k  // BPF_LDX | BPF_IMM
            case 0x60: a = mem[Int(ins.k & 15)]  // BPF_LD | BPF_MEM
            case 0x61: x = mem[Int(ins.k & 15)]  // BPF_LDX | BPF_MEM
            case 0x02: mem[Int(ins.k & 15)] = a  // BPF_ST
            case 0x03: mem[Int(ins.k & 15)] = x  // BPF_STX
            case 0x04, 0x0c: a = a &+ src  // BPF_ALU | BPF_ADD
            case 0x14, 0x1c: a = a &- src  // BPF_SUB
            case 0x44, 0x4c: a |= src  // BPF_OR
            case 0x54, 0x5c: a &= src  // BPF_AND
            case 0x64, 0x6c: a = src < 32 ? a << src : 0  // BPF_LSH
            case 0x74, 0x7c: a = src < 32 ? a >> src : 0  // BPF_RSH
            case 0x84: a = 0 &- a  // BPF_NEG
            case 0x07: x = a  // BPF_MISC | BPF_TAX
            case 0x87: a = x  // BPF_MISC | BPF_TXA
            case 0x05: pc += Int(ins.k)  // BPF_JMP | BPF_JA
            case 0x15, 0x1d: pc += a == src ? Int(ins.jt) : Int(ins.jf)  // BPF_JEQ
            case 0x25, 0x2d: pc += a > src ? Int(ins.jt) : Int(ins.jf)  // BPF_JGT
            case 0x35, 0x3d: pc += a >= src ? Int(ins.jt) : Int(ins.jf)  // BPF_JGE
            case 0x45, 0x4d: pc += a & src != 0 ? Int(ins.jt) : Int(ins.jf)  // BPF_JSET
            case 0x06: return ins.k  // BPF_RET | BPF_K
            case 0x16: return a  // BPF_RET | BPF_A
            default: throw Failure.badInstruction(pc: pc - 1, code: ins.code)
            }
        }
    }

    // SECCOMP_RET_* values, as the compiler emits them.
    static let allow: UInt32 = 0x7fff_0000
    static let killProcess: UInt32 = 0x8000_0000
    static let log: UInt32 = 0x7ffc_0000
    static let notify: UInt32 = 0x7fc0_0000
    static func errno(_ e: Int32) -> UInt32 { 0x0005_0000 | UInt32(e) }
}
