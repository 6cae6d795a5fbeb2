import Foundation

/// An installed extension, as the registry records it.
public struct InstalledExtension: Sendable, Hashable {
    public var bundleIdentifier: String
    /// `NSExtensionPointIdentifier`.
    public var extensionPoint: String
    /// `CFBundleDisplayName`, else `CFBundleName`.
    public var displayName: String?
    /// `CFBundleVersion`.
    public var version: String?
    /// `CFBundleShortVersionString`.
    public var shortVersion: String?
    /// `CFBundleExecutable`, a file name inside `bundlePath`.
    public var executable: String
    /// The installed copy: `<state>/bundles/<id>/<generation>/<Name>.appex`, root-owned.
    /// Launch from here, never from `sourcePath`.
    public var bundlePath: String
    /// Counts installs of this identifier; names the copy's directory.
    public var generation: Int
    /// Where it was installed from (the containing app or the `.appex`), for people only.
    public var sourcePath: String
    public var containingAppIdentifier: String?
    /// Installed extensions start disabled, as on iOS; a re-install keeps the state.
    public var isEnabled: Bool
    /// When this generation was installed.
    public var installedAt: Date
    /// `fnv1a64:…` of the installed copy (see `ContentDigest`: not cryptographic).
    public var contentDigest: String
}

/// A containing app some installed extensions came from.
public struct InstalledApp: Sendable, Hashable {
    public var bundleIdentifier: String
    public var displayName: String?
    public var version: String?
    public var shortVersion: String?
    public var sourcePath: String
    public var installedAt: Date
    /// Its installed extensions, sorted.
    public var extensionIdentifiers: [String]
}

extension ExtensionRecord {
    func installed(stateDirectory: String) -> InstalledExtension {
        InstalledExtension(
            bundleIdentifier: bundleIdentifier, extensionPoint: extensionPoint, displayName: displayName,
            version: version, shortVersion: shortVersion, executable: executable,
            bundlePath: stateDirectory + "/" + bundlePath, generation: generation,
            sourcePath: sourcePath, containingAppIdentifier: containingAppIdentifier,
            isEnabled: isEnabled, installedAt: installedAt, contentDigest: contentDigest)
    }
}
