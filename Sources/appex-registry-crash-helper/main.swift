// Drives a registry until it is SIGKILLed, for the registry's crash test:
//   appex-registry-crash-helper STATE_DIR KEEP_SOURCE... -- CHURN_SOURCE
// First installs every KEEP_SOURCE and enables what they hold, then prints "ready". Then, for
// ever: re-installs each KEEP_SOURCE (a new generation, enabled state kept), installs and
// uninstalls CHURN_SOURCE, toggling its extensions in between. Each finished step prints one
// line ("step N") after its commit, so the test can kill at a different point each time.
import AppexRegistry

#if canImport(Glibc)
import Glibc
#endif

/// One line to fd 1 or 2, unbuffered: a line printed is a step finished, even if a SIGKILL follows.
func say(_ line: String, fd: Int32 = 1) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3, let separator = arguments.firstIndex(of: "--"), separator + 1 < arguments.count else {
    say("usage: appex-registry-crash-helper STATE_DIR KEEP_SOURCE... -- CHURN_SOURCE", fd: 2)
    exit(2)
}
let state = arguments[0]
let keep = Array(arguments[1..<separator])
let churn = arguments[separator + 1]

do {
    let registry = try Registry(stateDirectory: state)
    for source in keep {
        for installed in try registry.install(path: source).extensions {
            try registry.enable(installed.bundleIdentifier)
        }
    }
    say("ready")
    var step = 0
    while true {
        for source in keep {
            try registry.install(path: source)
            step += 1
            say("step \(step)")
        }
        let churned = try registry.install(path: churn).extensions.map(\.bundleIdentifier)
        for id in churned { try registry.enable(id) }
        for id in churned { try registry.disable(id) }
        step += 1
        say("step \(step)")
        for id in churned { try registry.uninstall(id, removeData: true) }
        step += 1
        say("step \(step)")
    }
} catch {
    say("appex-registry-crash-helper: \(error)", fd: 2)
    exit(1)
}
