import AppexBundle

/// Checks an install applies beyond Apple's bundle rules (`BundleValidator`).
public struct InstallOptions: Sendable {
    /// Extension points the loaded policies cover beyond Apple's catalogue.
    public var extraExtensionPoints: Set<String>
    /// Further checks per bundle, e.g. activation rules and policy (what `appex validate`
    /// adds). Run on the staged copy; any error finding refuses the install.
    public var additionalChecks: (@Sendable (ExtensionBundle) -> [Finding])?
    /// Who asked: the source is read with this identity (appexd passes a non-root
    /// administrator's). nil, or uid 0: the process's own.
    public var requester: FileIdentity?
    /// App groups appexd's configuration grants; an extension declaring a group it is not a
    /// member of is refused (`install.app-group`, AppGroupMembership).
    public var appGroupGrants: AppGroupGrants

    public init(
        extraExtensionPoints: Set<String> = [],
        additionalChecks: (@Sendable (ExtensionBundle) -> [Finding])? = nil,
        requester: FileIdentity? = nil, appGroupGrants: AppGroupGrants = AppGroupGrants()
    ) {
        self.extraExtensionPoints = extraExtensionPoints
        self.additionalChecks = additionalChecks
        self.requester = requester
        self.appGroupGrants = appGroupGrants
    }
}

/// What an install did.
public struct InstallResult: Sendable {
    /// The containing app, when one was installed.
    public var app: InstalledApp?
    /// The extensions installed (new or replaced), sorted by identifier.
    public var extensions: [InstalledExtension]
    /// Extensions of the same app that its new version no longer holds: uninstalled, their
    /// data containers kept.
    public var removedExtensions: [String]
    /// Warnings per source bundle (errors refuse the install instead).
    public var warnings: [BundleFindings]
}

/// What opening the registry cleaned up after a crash or a SIGKILL.
public struct RecoveryReport: Sendable, Hashable {
    /// Half-made installs removed from `bundles/.staging`.
    public var removedStaging: [String] = []
    /// Copies no row refers to (`bundles/<id>` or `bundles/<id>/<generation>`), removed: a
    /// crash between placing a copy and committing its row, or before an old one was removed.
    public var removedOrphans: [String] = []
    /// Rows whose installed copy is missing: something outside the registry deleted it.
    /// They stay listed; `Registry.integrityProblems()` names them too.
    public var missingCopies: [String] = []
    /// Data containers an uninstall detached but did not finish removing, removed now.
    public var removedData: [String] = []
    /// Why removing such a container failed again; it is tried at the next open.
    public var dataLeftBehind: String?

    public var isEmpty: Bool {
        removedStaging.isEmpty && removedOrphans.isEmpty && missingCopies.isEmpty && removedData.isEmpty && dataLeftBehind == nil
    }
}
