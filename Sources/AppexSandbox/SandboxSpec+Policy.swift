import AppexBundle
import AppexPolicyCore
import AppexStateDirectory

extension SandboxSpec {
    /// The sandbox of a loaded bundle under its effective policy.
    public init(bundle: ExtensionBundle, policy: EffectivePolicy, arguments: [String] = []) throws {
        guard let id = bundle.info.bundleIdentifier, !id.isEmpty else {
            throw SandboxError(
                "read bundle", path: bundle.infoPlistPath, errno: .invalidArgument,
                message: "Info.plist has no CFBundleIdentifier")
        }
        guard let exe = bundle.executablePath else {
            throw SandboxError(
                "read bundle", path: bundle.infoPlistPath, errno: .invalidArgument,
                message: "Info.plist names no usable CFBundleExecutable")
        }
        self.init(policy: policy, bundleIdentifier: id, bundlePath: bundle.path, executablePath: exe, arguments: arguments)
    }

    /// A bare executable run as if its bundle declared `policy.extensionPoint`; its identifier
    /// is `bare.<file name>` unless one is given.
    public init(executable: String, policy: EffectivePolicy, bundleIdentifier: String? = nil, arguments: [String] = []) {
        self.init(
            policy: policy, bundleIdentifier: bundleIdentifier ?? Self.bareIdentifier(executable),
            bundlePath: executable, executablePath: executable, arguments: arguments)
    }

    /// `bare.<file name>`, the name made a valid identifier (BundleIdentifierRules): leading
    /// dots dropped, a dot after a dot and every character outside A–Z, a–z, 0–9, `-` and `.`
    /// made `-`. By Unicode scalar, not Character: `Character.isLetter` kept letters the
    /// identifier rules then refused (`é`), and its first use loaded Unicode property tables
    /// on every `appex run` of a bare executable.
    static func bareIdentifier(_ executable: String) -> String {
        let name = executable.split(separator: "/").last ?? ""
        var safe = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            if scalar == "." && (safe.isEmpty || safe.last == ".") {
                if !safe.isEmpty { safe.append("-") }
                continue
            }
            safe.append(BundleIdentifierRules.isAllowed(scalar) ? scalar : "-")
        }
        return "bare." + (safe.isEmpty ? "executable" : String(safe))
    }

    init(policy: EffectivePolicy, bundleIdentifier: String, bundlePath: String, executablePath: String, arguments: [String]) {
        let p = policy.policy
        self.init(
            bundleIdentifier: bundleIdentifier, bundlePath: bundlePath, executablePath: executablePath,
            arguments: arguments,
            environment: ["APPEX_EXTENSION_POINT": policy.extensionPoint],
            memoryMax: policy.cgroupMemoryMax, memoryHigh: policy.cgroupMemoryHigh,
            pidsMax: p.pidsLimit, openFilesLimit: p.openFilesLimit,
            syscallRules: policy.syscallRules.map { SeccompRule($0.name, $0.action) },
            readOnlyPaths: p.readOnlyPaths, appGroups: policy.appGroups,
            hostNetwork: policy.hostNetwork)
    }
}
