import AppexBinaryLint
import AppexBundle
import AppexCommandSupport
import AppexPolicy
import AppexRun
import ArgumentParser
import Foundation

/// `appex lint-binary PATH...`: the extension-safe API check (Docs/extension-safe-api.md).
/// Findings are warnings, as Xcode's are: exit 0 with warnings, 65 when an input is malformed,
/// 66 when it is missing (ExitStatus).
struct LintBinaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint-binary",
        abstract: "Report imported calls the extension's policy denies.",
        discussion: "Report the calls an executable imports that its extension point's policy denies."
    )

    @Argument(help: "ELF executables, or .appex bundles (their executable and the libraries they bundle).")
    var paths: [String]

    @Option(
        name: .customLong("extension-point"),
        help: "Check against this extension point's policy (default: the bundle's; the defaults for a bare executable).")
    var extensionPoint: String?

    @OptionGroup var policyOverlays: PolicyOverlayOptions

    @Flag(help: "Print one JSON array of results instead of text.")
    var json = false

    struct Target {
        var path: String
        var kind: String
        var report: BinaryLintReport
        var usesDefaults: Bool
    }

    func run() throws {
        let policies: PolicySet
        do { policies = try PolicyLocator.load(overlays: policyOverlays.directories) } catch {
            throw CommandFailure(.configuration, "appex lint-binary: cannot load policies: \(error)")
        }
        let targets = paths.map { lint($0, policies: policies) }
        if json {
            try JSONOutput.print(targets.map(Self.jsonObject))
        } else {
            for t in targets { print(Self.render(t)) }
        }
        // A missing file is not a malformed one (ExitStatus).
        if paths.contains(where: { !FileManager.default.fileExists(atPath: $0) }) { throw ExitCode(ExitStatus.noInput.rawValue) }
        if targets.contains(where: { !$0.report.errors.isEmpty }) { throw ExitCode(ExitStatus.dataError.rawValue) }
    }

    func lint(_ path: String, policies: PolicySet) -> Target {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        func policy(_ point: String?, _ entitlements: Entitlements) -> (BinaryLintPolicy, Bool) {
            let effective = EffectivePolicy(extensionPoint: point ?? "", entitlements: entitlements, in: policies)
            return (BinaryLintPolicy(effective, extensionPoint: point), effective.usesDefaults)
        }
        guard exists && isDirectory.boolValue else {
            let (p, defaults) = policy(extensionPoint, Entitlements())
            return Target(path: path, kind: "elf", report: BinaryLinter.lint(file: path, policy: p), usesDefaults: defaults)
        }
        do {
            let bundle = try ExtensionBundle.load(path: path)
            let (p, defaults) = policy(extensionPoint ?? bundle.info.extensionInfo?.pointIdentifier, bundle.entitlements)
            guard let executable = bundle.info.executable, bundle.executablePath != nil else {
                var report = BinaryLintReport(policy: p)
                report.errors.append(
                    BinaryLintError(object: path, kind: .unreadable, message: "the bundle's Info.plist names no executable (CFBundleExecutable)"))
                return Target(path: path, kind: "bundle", report: report, usesDefaults: defaults)
            }
            return Target(
                path: path, kind: "bundle", report: BinaryLinter.lint(bundle: bundle.path, executable: executable, policy: p), usesDefaults: defaults)
        } catch {
            let (p, defaults) = policy(extensionPoint, Entitlements())
            var report = BinaryLintReport(policy: p)
            report.errors.append(BinaryLintError(object: path, kind: .unreadable, message: "not a bundle: \(error)"))
            return Target(path: path, kind: "bundle", report: report, usesDefaults: defaults)
        }
    }

    static func render(_ t: Target) -> String {
        let r = t.report
        var lines = r.errors.map { "\(t.path): error: \($0)" }
        lines += r.findings.map { "\(t.path): warning: \($0.message) [\($0.code.rawValue)]" }
        let n = r.findings.count
        var policy = "the \(r.policy.title) policy"
        if let point = r.policy.extensionPoint { policy += " (\(point)\(t.usesDefaults ? ": no policy covers it, the defaults apply" : ""))" }
        lines.append("\(t.path): \(n) warning\(n == 1 ? "" : "s") under \(policy)")
        if !r.objects.isEmpty { lines.append("  checked: \(r.objects.joined(separator: ", "))") }
        // Libraries not checked, grouped by who needs them and why: a Swift program needs a
        // dozen runtime libraries, all for one reason.
        var groups: [(key: String, names: [String])] = []
        for link in r.libraries where !link.checked {
            let key = "needed by \(link.neededBy), \(link.note ?? "not checked")"
            if let i = groups.firstIndex(where: { $0.key == key }) { groups[i].names.append(link.name) } else { groups.append((key, [link.name])) }
        }
        for g in groups { lines.append("  not checked: \(g.names.joined(separator: ", ")) (\(g.key))") }
        return lines.joined(separator: "\n")
    }

    static func jsonObject(_ t: Target) -> [String: Any] {
        let r = t.report
        return [
            "path": t.path, "kind": t.kind,
            "policy": r.policy.title, "extensionPoint": r.policy.extensionPoint.jsonOrNull, "usesDefaults": t.usesDefaults,
            "objects": r.objects,
            "libraries": r.libraries.map { l -> [String: Any] in
                ["name": l.name, "neededBy": l.neededBy, "path": l.path.jsonOrNull, "checked": l.checked, "note": l.note.jsonOrNull]
            },
            "findings": r.findings.map { f -> [String: Any] in
                [
                    "severity": "warning", "code": f.code.rawValue, "object": f.object, "symbol": f.symbol.jsonOrNull,
                    "syscall": f.syscall.jsonOrNull, "group": f.group.jsonOrNull, "action": f.action.jsonOrNull, "message": f.message,
                ]
            },
            "errors": r.errors.map { e -> [String: Any] in ["object": e.object, "kind": e.kind.rawValue, "message": e.message] },
        ]
    }
}
