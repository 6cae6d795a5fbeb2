import AppexBundle
import AppexCommandSupport
import AppexPolicy
import AppexRun
import ArgumentParser
import Foundation

/// `appex validate PATH...`: exit 0 when every target is valid (warnings allowed), 1 otherwise.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check bundles and plists as Apple's tools would.",
        discussion: "Check .appex bundles, containing apps, Info.plist or .entitlements files as Apple's tools would."
    )

    @Argument(help: "Bundles (Name.appex), containing apps (Host.app with PlugIns/), Info.plist or .entitlements files.")
    var paths: [String]

    @Flag(help: "Print one JSON array of results instead of text.")
    var json = false

    @OptionGroup var build: BuildSettingOptions

    @OptionGroup var policyOverlays: PolicyOverlayOptions

    struct Result {
        var path: String
        var kind: String
        var findings: [Finding]
        var valid: Bool { !findings.hasErrors }
    }

    func run() throws {
        let settings = try build.settings()
        let policies = try PolicyLocator.load(overlays: policyOverlays.directories)
        var results: [Result] = []
        for path in paths {
            results += Self.validate(path, settings: settings, policies: policies)
        }
        if json {
            try JSONOutput.print(
                results.map { r in
                    [
                        "path": r.path, "kind": r.kind, "valid": r.valid,
                        "findings": r.findings.map(\.jsonObject),
                    ] as [String: Any]
                })
        } else {
            for r in results { print(Self.render(r)) }
        }
        // A path that is not there is not a verdict on a bundle (ExitStatus.noInput).
        if paths.contains(where: { !FileManager.default.fileExists(atPath: $0) }) { throw ExitCode(ExitStatus.noInput.rawValue) }
        if results.contains(where: { !$0.valid }) { throw ExitCode(ExitStatus.no.rawValue) }
    }

    static func validate(_ path: String, settings: [String: String], policies: PolicySet) -> [Result] {
        do {
            switch try InputTarget.load(path, buildSettings: settings) {
            case .bundle(let bundle):
                return [
                    Result(path: path, kind: "bundle", findings: ValidationReport.findings(info: bundle.info, bundle: bundle, policies: policies))
                ]
            case .infoPlist(_, let info):
                return [Result(path: path, kind: "info-plist", findings: ValidationReport.findings(info: info, bundle: nil, policies: policies))]
            case .entitlements(_, let entitlements):
                return [Result(path: path, kind: "entitlements", findings: entitlements.validate())]
            case .containingApp(let app):
                var appFindings: [Finding] = []
                if app.bundleIdentifier == nil {
                    appFindings.append(.error("bundle.missing-key", at: "CFBundleIdentifier", "the containing app has no bundle identifier"))
                }
                if app.plugIns.isEmpty {
                    appFindings.append(.warning("app.no-plugins", at: .root, "PlugIns/ holds no .appex bundles"))
                }
                var out = [Result(path: path, kind: "containing-app", findings: appFindings)]
                for plugIn in app.plugIns {
                    switch plugIn.result {
                    case .success(let bundle):
                        out.append(
                            Result(
                                path: plugIn.path, kind: "bundle",
                                findings: ValidationReport.findings(info: bundle.info, bundle: bundle, policies: policies)))
                    case .failure(let error):
                        out.append(Result(path: plugIn.path, kind: "bundle", findings: [malformed(error)]))
                    }
                }
                return out
            }
        } catch let error as PropertyListFileError {
            return [Result(path: path, kind: "unreadable", findings: [malformed(error)])]
        } catch {
            return [Result(path: path, kind: "unreadable", findings: [.error("plist.malformed", at: .root, "\(error)")])]
        }
    }

    static func malformed(_ error: PropertyListFileError) -> Finding {
        .error("plist.malformed", at: .root, error.description)
    }

    static func render(_ r: Result) -> String {
        let errors = r.findings.filter { $0.severity == .error }.count
        let warnings = r.findings.count - errors
        var head = "\(r.path): \(r.valid ? "valid" : "INVALID")"
        var counts: [String] = []
        if errors > 0 { counts.append("\(errors) error\(errors == 1 ? "" : "s")") }
        if warnings > 0 { counts.append("\(warnings) warning\(warnings == 1 ? "" : "s")") }
        if !counts.isEmpty { head += " (\(counts.joined(separator: ", ")))" }
        return ([head] + r.findings.map { "  \($0)" }).joined(separator: "\n")
    }
}

extension Finding {
    var jsonObject: [String: Any] {
        ["severity": severity.rawValue, "code": code, "keyPath": keyPath.description, "message": message]
    }
}
