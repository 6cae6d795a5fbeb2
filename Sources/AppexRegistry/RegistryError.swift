import AppexBundle

/// The findings that refused one bundle of an install, with the source path they are about.
public struct BundleFindings: Sendable, Hashable, CustomStringConvertible {
    /// The source bundle (a containing app or an `.appex`) as given, not the staged copy.
    public var path: String
    public var findings: [Finding]

    public init(path: String, findings: [Finding]) {
        self.path = path
        self.findings = findings
    }

    public var description: String {
        ([path + ":"] + findings.map { "  \($0)" }).joined(separator: "\n")
    }
}

/// Everything the registry refuses or fails at, each naming the identifier or path involved.
public enum RegistryError: Error, Sendable, CustomStringConvertible {
    /// The source failed validation or holds what an install refuses (symlinks, FIFOs,
    /// devices, hard links, too many entries, too many bytes). Nothing was installed.
    case invalidBundle(source: String, bundles: [BundleFindings])
    /// The install path is missing, not a directory, or is itself a symbolic link.
    case unusableSource(path: String, problem: String)
    /// No installed extension (or containing app, for `uninstall`) has this identifier.
    case unknownExtension(String)
    /// The identifier is installed from another containing app (or bare, or from an app):
    /// replacing it would let one app take over another's extension. Uninstall it first.
    case ownedByAnotherApp(identifier: String, installedFrom: String?, requestedFrom: String?)
    /// The extension declares app groups it is not a member of (AppGroupMembership): it is
    /// not enabled. One reason per group.
    case appGroupRefused(identifier: String, reasons: [String])
    /// A file-system call on the state directory failed.
    case system(operation: String, path: String, errno: Int32)
    /// SQLite refused or failed an operation.
    case database(operation: String, message: String)
    /// Removing the extension's data container failed; the extension is still installed.
    case containerRemoval(identifier: String, message: String)
    /// The extension was uninstalled, but removing its detached data container failed; the
    /// registry removes it when it next opens.
    case dataLeftBehind(identifier: String, path: String, message: String)

    public var description: String {
        switch self {
        case .invalidBundle(let source, let bundles):
            let errors = bundles.flatMap(\.findings).filter { $0.severity == .error }.count
            return
                (["refused \(source): \(errors) error\(errors == 1 ? "" : "s")"]
                + bundles.filter { !$0.findings.isEmpty }.map(\.description)).joined(separator: "\n")
        case .unusableSource(let path, let problem):
            return "cannot install \(path): \(problem)"
        case .unknownExtension(let id):
            return "no installed extension \"\(id)\""
        case .ownedByAnotherApp(let id, let installed, let requested):
            func describe(_ app: String?) -> String { app.map { "containing app \"\($0)\"" } ?? "a bare .appex" }
            return "\"\(id)\" is installed from \(describe(installed)), not \(describe(requested)); uninstall it first"
        case .appGroupRefused(let id, let reasons):
            return (["cannot enable \"\(id)\":"] + reasons.map { "  \($0)" }).joined(separator: "\n")
        case .system(let operation, let path, let errno):
            return "\(operation) \(path): \(String(cString: strerror(errno))) (errno \(errno))"
        case .database(let operation, let message):
            return "registry database: \(operation): \(message)"
        case .containerRemoval(let id, let message):
            return "removing the data container of \"\(id)\": \(message)"
        case .dataLeftBehind(let id, let path, let message):
            return "uninstalled \"\(id)\", but its data, moved to \(path), could not be removed: \(message); "
                + "it is removed when the registry next opens"
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
