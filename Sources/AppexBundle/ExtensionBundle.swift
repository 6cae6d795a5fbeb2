/// A `Name.appex/` directory: `Info.plist`, the executable it names, optional entitlements.
///
/// Entitlements live in the code signature on Apple systems; on Linux a bundle carries them as
/// `Entitlements.plist` (or a single `*.entitlements` file) at its top level.
public struct ExtensionBundle: Sendable {
    public var path: String
    public var info: InfoPlist
    public var entitlements: Entitlements
    /// Where the entitlements were read from, when the bundle has them.
    public var entitlementsPath: String?
    /// The containing app's bundle identifier, when loaded from its `PlugIns/`.
    public var containingAppIdentifier: String?

    public var infoPlistPath: String { BundlePath.join(path, "Info.plist") }

    /// The executable's path, when `CFBundleExecutable` names one without escaping the bundle.
    public var executablePath: String? {
        guard let name = info.executable, !name.isEmpty, !name.contains("/"), name != "..", name != "." else { return nil }
        return BundlePath.join(path, name)
    }

    public init(
        path: String, info: InfoPlist, entitlements: Entitlements = Entitlements(),
        entitlementsPath: String? = nil, containingAppIdentifier: String? = nil
    ) {
        self.path = path
        self.info = info
        self.entitlements = entitlements
        self.entitlementsPath = entitlementsPath
        self.containingAppIdentifier = containingAppIdentifier
    }

    /// Loads a bundle directory. Throws only when `Info.plist` cannot be read or parsed;
    /// everything else is a validation finding.
    public static func load(
        path: String, buildSettings: [String: String] = [:],
        containingAppIdentifier: String? = nil
    ) throws -> ExtensionBundle {
        let standardized = BundlePath.standardized(path)
        let info = try InfoPlist.load(
            path: BundlePath.join(standardized, "Info.plist"),
            buildSettings: buildSettings)
        var entitlements = Entitlements()
        let entitlementsPath = findEntitlements(in: standardized)
        if let entitlementsPath {
            entitlements = try Entitlements.load(path: entitlementsPath, buildSettings: buildSettings)
        }
        return ExtensionBundle(
            path: standardized, info: info, entitlements: entitlements,
            entitlementsPath: entitlementsPath, containingAppIdentifier: containingAppIdentifier)
    }

    static func findEntitlements(in bundle: String) -> String? {
        let fixed = BundlePath.join(bundle, "Entitlements.plist")
        if BundlePath.exists(fixed) { return fixed }
        let candidates = BundlePath.entries(of: bundle).filter { $0.hasSuffix(".entitlements") }.sorted()
        return candidates.first.map { BundlePath.join(bundle, $0) }
    }
}
