// appex-example-balloon: allocates and touches memory in steps until the kernel
// stops it (the extension's hard limit) or it reaches its maximum.
// Usage: AppexExampleBalloon [STEP_MIB] [MAX_MIB]   (defaults 8 and 1024)
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let args = CommandLine.arguments
let stepMiB = args.count > 1 ? max(1, Int(args[1]) ?? 8) : 8
let maxMiB = args.count > 2 ? max(stepMiB, Int(args[2]) ?? 1024) : 1024
let mib = 1 << 20

func say(_ line: String) {
    // write(2) to fd 2: unbuffered, and no shared C `stderr` global under strict concurrency.
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

var blocks: [UnsafeMutableRawPointer] = []
var total = 0
while total < maxMiB {
    guard let block = malloc(stepMiB * mib) else {
        say("balloon: malloc failed at \(total) MiB")
        exit(1)
    }
    // Touch every page so the memory is really charged.
    memset(block, 0x5a, stepMiB * mib)
    blocks.append(block)
    total += stepMiB
    say("balloon: \(total) MiB")
}
say("balloon: reached \(maxMiB) MiB without being stopped")
