// libFuzzer's two entry points, shared by the harnesses in this directory (each built by its
// `make fuzz-*` target). A harness defines `fuzzSeeds()` and `fuzzInput(_:)`.
#if canImport(Glibc)
import Glibc
#endif

/// Writes the harness's seeds as files `seed-N` into the corpus directory named by
/// APPEX_FUZZ_SEEDS, if set: libFuzzer starts from them.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>)
    -> Int32
{
    guard let dir = getenv("APPEX_FUZZ_SEEDS") else { return 0 }
    let base = String(cString: dir)
    for (i, input) in fuzzSeeds().enumerated() {
        guard let f = fopen(base + "/seed-\(i)", "w") else { continue }
        _ = input.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
        fclose(f)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzInput(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
