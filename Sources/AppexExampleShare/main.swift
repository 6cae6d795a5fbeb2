// appex-example-share: the shipped example share extension.
//
// Until the request protocol lands it does what a share extension's launch does: read its
// container, keep state there across launches, and meet the sandbox's "API unavailable"
// answer for a call extensions may not make. No Foundation, so it links small and static.
#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to stdout with write(2): the C `stdout` global is not concurrency-safe.
func say(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(1, $0, strlen($0)) }
}

func env(_ name: String) -> String {
    getenv(name).map { String(cString: $0) } ?? "(unset)"
}

let home = env("HOME")
say("share: uid=\(getuid()) gid=\(getgid()) pid=\(getpid())")
say("share: HOME=\(home) TMPDIR=\(env("TMPDIR"))")

// A counter in Documents/ shows that the container persists across launches.
let counterPath = home + "/Documents/launch-count"
var count = 0
if let f = fopen(counterPath, "r") {
    var buffer = [CChar](repeating: 0, count: 32)
    if fgets(&buffer, 32, f) != nil {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        count = Int(String(decoding: bytes, as: UTF8.self).filter(\.isNumber)) ?? 0
    }
    fclose(f)
}
count += 1
if let f = fopen(counterPath, "w") {
    fputs("\(count)\n", f)
    fclose(f)
    say("share: launch \(count) (state kept in \(counterPath))")
} else {
    say("share: cannot write \(counterPath): \(String(cString: strerror(errno)))")
}

// Becoming a session leader is how a process would outlive its host: unavailable.
if setsid() == -1 {
    say("share: setsid refused: \(String(cString: strerror(errno))) (unavailable to app extensions)")
} else {
    say("share: setsid allowed (no sandbox?)")
}
exit(0)
