import AppexBundle
import AppexPolicy

extension SandboxSpec {
    /// The sandbox of a loaded bundle under its effective policy.
    public init(bundle: ExtensionBundle, policy: EffectivePolicy, arguments: [String] = []) throws {
        guard let id = bundle.info.bundleIdentifier, !id.isEmpty else {
            throw SandboxError("read bundle", path: bundle.infoPlistPath, errno: .invalidArgument,
                               message: "Info.plist has no CFBundleIdentifier")
        }
        guard let exe = bundle.executablePath else {
            throw SandboxError("read bundle", path: bundle.infoPlistPath, errno: .invalidArgument,
                               message: "Info.plist names no usable CFBundleExecutable")
        }
        self.init(policy: policy, bundleIdentifier: id, bundlePath: bundle.path, executablePath: exe, arguments: arguments)
    }

    /// A bare executable run as if its bundle declared `policy.extensionPoint`; its identifier
    /// is `bare.<file name>` unless one is given.
    public init(executable: String, policy: EffectivePolicy, bundleIdentifier: String? = nil, arguments: [String] = []) {
        let name = executable.split(separator: "/").last.map(String.init) ?? "executable"
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "-" })
            .trimmingPrefix(".")
        self.init(policy: policy, bundleIdentifier: bundleIdentifier ?? "bare." + (safe.isEmpty ? "executable" : String(safe)),
                  bundlePath: executable, executablePath: executable, arguments: arguments)
    }

    init(policy: EffectivePolicy, bundleIdentifier: String, bundlePath: String, executablePath: String, arguments: [String]) {
        let p = policy.policy
        self.init(bundleIdentifier: bundleIdentifier, bundlePath: bundlePath, executablePath: executablePath,
                  arguments: arguments,
                  environment: ["APPEX_EXTENSION_POINT": policy.extensionPoint],
                  memoryMax: policy.cgroupMemoryMax, memoryHigh: policy.cgroupMemoryHigh,
                  pidsMax: p.pidsLimit, openFilesLimit: p.openFilesLimit,
                  syscallRules: policy.syscallRules.map { SeccompRule($0.name, $0.action) },
                  readOnlyPaths: p.readOnlyPaths, appGroups: policy.appGroups,
                  hostNetwork: policy.hostNetwork)
    }
}
