import AppexBundle
import AppexPolicy

extension BinaryLinter {
    /// The check as part of `appex validate`: every result is a warning (the policy still
    /// decides at run time; this only tells the author before launch), at `CFBundleExecutable`.
    /// An executable that is missing, unreadable or not ELF is left to the bundle checks.
    public static func validationFindings(bundle: ExtensionBundle, policy: BinaryLintPolicy) -> [Finding] {
        guard let executable = bundle.info.executable, bundle.executablePath != nil else { return [] }
        let report = lint(bundle: bundle.path, executable: executable, policy: policy)
        let at = PlistKeyPath.root.appending("CFBundleExecutable")
        var out = report.findings.map { Finding.warning($0.code.rawValue, at: at, $0.message) }
        for error in report.errors {
            switch error.kind {
            case .unreadable:
                continue  // only the executable can be unreadable; the bundle checks said why
            case .notELF where error.object == executable:
                continue
            case .tooManyLibraries:
                out.append(.warning(BinaryFinding.Code.libraryUnchecked.rawValue, at: at, error.description))
            default:
                out.append(.warning("binary.malformed", at: at, "\(error.description); its imports were not checked"))
            }
        }
        return out
    }
}
