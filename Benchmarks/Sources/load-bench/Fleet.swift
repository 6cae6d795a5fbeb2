import AppexWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The eight extensions under load, all the C probe on the benchmark's own extension point,
/// and what each request asks of them (Docs/probe-extension.md).
enum Behaviour: String, CaseIterable, Sendable {
    case echo0, echo1, echo2, echo3
    /// Every request sleeps `slowMilliseconds` (without blocking: pings are answered).
    case slow
    /// One request in `crashEvery` raises SIGSEGV; the others echo.
    case crash
    /// A few requests `pause()` for ever (pings go unanswered too): appexd must end them.
    case hang
    /// Never answers a ping (probe.conf `ignore-pings=1`). appexd pings a busy instance (an
    /// idle one rarely, and answering a request moves its next ping out again), so one request
    /// in `deafSlowEvery` sleeps `deafSleepMilliseconds`, long enough to be pinged and killed
    /// (`unresponsive`) while serving; the others echo.
    case deaf

    static let slowMilliseconds = 100
    static let deafSlowEvery = 10
    static let deafSleepMilliseconds = 2500
    static let crashEvery = 20
    /// Each host sends `hang` on one request in this many of its requests to the hang extension.
    static let hangEvery = 125

    var wellBehaved: Bool { rawValue.hasPrefix("echo") }
    var bundleIdentifier: String { "dev.appex.bench.load.\(rawValue)" }

    /// `--no-faults` (the control): crash, hang and deaf echo instead; the slow one still sleeps,
    /// so the hosts keep the same pace.
    static let faults = !CommandLine.arguments.contains("--no-faults")

    /// What this extension is told on a host's `k`-th request to it (host `host`): action and
    /// argument, nil for a plain echo.
    func instruction(host: Int, k: Int) -> (action: String, argument: String?)? {
        if !Behaviour.faults && self != .slow { return nil }
        switch self {
        case .echo0, .echo1, .echo2, .echo3: return nil
        case .deaf: return (k + host * 3) % Behaviour.deafSlowEvery == 0 ? ("sleep", "\(Behaviour.deafSleepMilliseconds)") : nil
        case .slow: return ("sleep", "\(Behaviour.slowMilliseconds)")
        case .crash: return (k + host) % Behaviour.crashEvery == 0 ? ("crash", nil) : nil
        case .hang: return (k + host * 7) % Behaviour.hangEvery == 0 ? ("hang", nil) : nil
        }
    }

    /// The request's one item: a small text, and the instruction in its user info.
    func items(host: Int, k: Int) -> [ExtensionItem] {
        var info: [String: UserInfoValue] = [:]
        if let (action, argument) = instruction(host: host, k: k) {
            info["probe.action"] = .string(action)
            if let argument { info["probe.arg"] = .string(argument) }
        }
        return [ExtensionItem(attributedContentText: "load", userInfo: info)]
    }
}

/// The extension point: instances kept (idle for an hour), up to 8 per extension, and short
/// fault windows so that a run ends in minutes: 3 s per request, a busy instance pinged every
/// second (appexd never pings more often than the pong window), 1 s to answer.
let extensionPoint = "dev.appex.bench.load"
let policy = """
    extensionPoints: [\(extensionPoint)]
    title: Load benchmark
    idleTimeout: 1h
    maxInstances: 8
    requestTimeout: 3s
    pingInterval: 1s
    idlePingInterval: 30s
    unresponsiveTimeout: 1s
    """

/// Writes the policy under `root`/policies and a bare `.appex` around the probe for each
/// behaviour under `root`/src; returns the bundles' paths.
func writeFleet(root: String, probe: String) -> [Behaviour: String] {
    var paths: [Behaviour: String] = [:]
    do {
        try FileManager.default.createDirectory(atPath: root + "/policies/extension-points", withIntermediateDirectories: true)
        try policy.write(toFile: root + "/policies/extension-points/load.yaml", atomically: true, encoding: .utf8)
        for b in Behaviour.allCases {
            let path = root + "/src/\(b.rawValue).appex"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: probe, toPath: path + "/probe")
            try """
            <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>\(b.bundleIdentifier)</string><key>CFBundleExecutable</key><string>probe</string>
            <key>CFBundlePackageType</key><string>XPC!</string><key>CFBundleVersion</key><string>1</string>
            <key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key><string>\(extensionPoint)</string></dict>
            </dict></plist>
            """.write(toFile: path + "/Info.plist", atomically: true, encoding: .utf8)
            if b == .deaf { try "ignore-pings=1\n".write(toFile: path + "/probe.conf", atomically: true, encoding: .utf8) }
            chmod(path, 0o755)
            paths[b] = path
        }
        chmod(root + "/src", 0o755)
    } catch { fail("writing the fleet: \(error)") }
    return paths
}
