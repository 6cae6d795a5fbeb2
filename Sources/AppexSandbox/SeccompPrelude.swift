/// The few classic-BPF instructions placed before libseccomp's program that give every
/// syscall number Appex does not know its answer (ENOSYS), so that libseccomp's own program
/// needs rules only for the calls a policy judges, and allows the rest by default.
///
/// Why: the kernel's work to load a filter grows with its length (copy, check, conversion,
/// JIT) and with the instructions each syscall number walks (the kernel runs the filter for
/// every number once to fill its allow cache). A default of ENOSYS made libseccomp emit an
/// allow rule for each of several hundred known numbers, and the kernel's cost to load a
/// filter grows with its length. Known numbers are a few ranges, so here they are a few
/// comparisons and the program is a fraction of that length (figures:
/// Docs/decisions/0004-shorter-filter-sandbox-beside.md).
///
/// Layout, with the accumulator loaded as the kernel gives it (unsigned 32-bit):
///
///     ld arch;  arch != native       → libseccomp (which kills other architectures)
///     ld nr;    nr > highest known   → high
///     for each gap [a, b] between known numbers, in order:
///               nr < a               → libseccomp (below every later gap too)
///               nr <= b              → unknown
///     ja libseccomp
///     high (x86_64): nr < 0x40000000 → unknown
///               nr == 0xffffffff     → unknown (what a tracer sets to skip a call)
///               otherwise            → libseccomp (which kills the x32 ABI)
///     high (elsewhere): → unknown
///     unknown:  ret the unknown-syscall action
///     libseccomp's program
///
/// Jumps in classic BPF only go forward, so placing this before libseccomp's program leaves
/// that program's own offsets as they were.
enum SeccompPrelude {
    private enum Target { case next, libseccomp, unknown, high }
    private enum Step {
        case loadArch, loadNumber
        case jump(op: UInt16, k: UInt32, ifTrue: Target, ifFalse: Target)
        case always(Target)
        case returnUnknown
    }

    static let jeq: UInt16 = 0x15, jgt: UInt16 = 0x25, jge: UInt16 = 0x35

    /// The prelude's bytes (`struct sock_filter[]`), or nil when `known` has so many gaps that
    /// a jump would not fit in classic BPF's 8-bit offsets (never for a real table).
    static func bytes(known: [Int32], nativeArch: UInt32, x32: Bool, unknownAction: UInt32) -> [UInt8]? {
        let numbers = known.filter { $0 >= 0 }.sorted()
        guard let highest = numbers.last else { return nil }
        var steps: [Step] = [
            .loadArch, .jump(op: jeq, k: nativeArch, ifTrue: .next, ifFalse: .libseccomp),
            .loadNumber, .jump(op: jgt, k: UInt32(highest), ifTrue: .high, ifFalse: .next),
        ]
        for (a, b) in gaps(numbers) {
            steps.append(.jump(op: jge, k: UInt32(a), ifTrue: .next, ifFalse: .libseccomp))
            steps.append(.jump(op: jgt, k: UInt32(b), ifTrue: .next, ifFalse: .unknown))
        }
        steps.append(.always(.libseccomp))
        let high = steps.count
        if x32 {
            steps.append(.jump(op: jge, k: 0x4000_0000, ifTrue: .next, ifFalse: .unknown))
            steps.append(.jump(op: jeq, k: 0xffff_ffff, ifTrue: .unknown, ifFalse: .libseccomp))
        }
        let unknown = steps.count
        steps.append(.returnUnknown)
        let libseccomp = steps.count

        func offset(_ target: Target, from index: Int) -> Int {
            switch target {
            case .next: 0
            case .libseccomp: libseccomp - index - 1
            case .unknown: unknown - index - 1
            case .high: high - index - 1
            }
        }
        var out: [UInt8] = []
        func emit(_ code: UInt16, _ jt: Int, _ jf: Int, _ k: UInt32) {
            withUnsafeBytes(of: code.littleEndian) { out += $0 }
            out += [UInt8(jt), UInt8(jf)]
            withUnsafeBytes(of: k.littleEndian) { out += $0 }
        }
        for (i, step) in steps.enumerated() {
            switch step {
            case .loadArch: emit(0x20, 0, 0, 4)  // ld [4]: seccomp_data.arch
            case .loadNumber: emit(0x20, 0, 0, 0)  // ld [0]: seccomp_data.nr
            case .jump(let op, let k, let t, let f):
                let jt = offset(t, from: i), jf = offset(f, from: i)
                guard jt <= 255, jf <= 255 else { return nil }
                emit(op, jt, jf, k)
            case .always(let t): emit(0x05, 0, 0, UInt32(offset(t, from: i)))  // ja
            case .returnUnknown: emit(0x06, 0, 0, unknownAction)  // ret k
            }
        }
        return out
    }

    /// The runs of numbers between 0 and the highest known one that are not known.
    static func gaps(_ sorted: [Int32]) -> [(Int32, Int32)] {
        var result: [(Int32, Int32)] = []
        var expected: Int32 = 0
        for n in sorted {
            if n > expected { result.append((expected, n - 1)) }
            expected = max(expected, n + 1)
        }
        return result
    }
}
