import AppexBundle
import AppexCommandSupport
import AppexPolicy
import ArgumentParser
import Foundation

/// `appex info PATH`: the parsed model and the effective policy it would run under.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe a bundle or plist and its effective policy.",
        discussion: "Describe a bundle, containing app, Info.plist or .entitlements file and its effective policy."
    )

    @Argument(help: "A Name.appex bundle, a Host.app with PlugIns/, an Info.plist or an .entitlements file.")
    var path: String

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var build: BuildSettingOptions

    @OptionGroup var policyOverlays: PolicyOverlayOptions

    func run() throws {
        let policies = try PolicyLocator.load(overlays: policyOverlays.directories)
        let target: InputTarget
        do {
            target = try InputTarget.load(path, buildSettings: try build.settings())
        } catch let error as PropertyListFileError {
            throw CommandFailure(ErrorExitStatus.of(error) ?? .dataError, "appex info: \(error)")
        }
        let object = Self.describe(target, policies: policies)
        if json {
            try JSONOutput.print(object)
        } else {
            print(Self.text(object))
        }
    }

    static func describe(_ target: InputTarget, policies: PolicySet) -> [String: Any] {
        switch target {
        case .bundle(let bundle):
            var d = describe(info: bundle.info, entitlements: bundle.entitlements, policies: policies)
            d["kind"] = "bundle"
            d["path"] = bundle.path
            d["executablePath"] = bundle.executablePath.jsonOrNull
            d["entitlementsPath"] = bundle.entitlementsPath.jsonOrNull
            d["findings"] = ValidationReport.findings(info: bundle.info, bundle: bundle, policies: policies).map(\.jsonObject)
            return d
        case .infoPlist(let path, let info):
            var d = describe(info: info, entitlements: Entitlements(), policies: policies)
            d["kind"] = "info-plist"
            d["path"] = path
            d["findings"] = ValidationReport.findings(info: info, bundle: nil, policies: policies).map(\.jsonObject)
            return d
        case .entitlements(let path, let entitlements):
            return [
                "kind": "entitlements", "path": path, "bundleIdentifier": NSNull(), "extensionPoint": NSNull(),
                "activationRule": ["kind": "none"], "entitlements": describe(entitlements),
                "findings": entitlements.validate().map(\.jsonObject),
            ]
        case .containingApp(let app):
            var d = describe(info: app.info, entitlements: Entitlements(), policies: policies)
            d["kind"] = "containing-app"
            d["path"] = app.path
            d["plugIns"] = app.plugIns.map { plugIn -> [String: Any] in
                switch plugIn.result {
                case .success(let bundle): describe(.bundle(bundle), policies: policies)
                case .failure(let error): ["kind": "unreadable", "path": plugIn.path, "error": error.description]
                }
            }
            return d
        }
    }

    static func describe(info: InfoPlist, entitlements: Entitlements, policies: PolicySet) -> [String: Any] {
        let ext = info.extensionInfo
        var rule: [String: Any] = ["kind": ext?.activationRule.kind ?? "none"]
        switch ext?.activationRule {
        case .dictionary(let d)?: rule["dictionary"] = PlistValue.dictionary(d).jsonObject
        case .predicate(let p)?: rule["predicate"] = p
        default: break
        }
        rule.merge(ActivationDescription.describe(info), uniquingKeysWith: { _, new in new })
        var effective: Any = NSNull()
        if let point = ext?.pointIdentifier, BuildVariables.references(in: point).isEmpty {
            effective = EffectivePolicy(extensionPoint: point, entitlements: entitlements, in: policies).jsonObject
        }
        return [
            "bundleIdentifier": info.bundleIdentifier.jsonOrNull,
            "name": info.name.jsonOrNull,
            "displayName": info.displayName.jsonOrNull,
            "bundleName": info.bundleName.jsonOrNull,
            "executable": info.executable.jsonOrNull,
            "shortVersion": info.shortVersion.jsonOrNull,
            "version": info.version.jsonOrNull,
            "packageType": info.packageType.jsonOrNull,
            "extensionPoint": (ext?.pointIdentifier).jsonOrNull,
            "principalClass": (ext?.principalClass).jsonOrNull,
            "mainStoryboard": (ext?.mainStoryboard).jsonOrNull,
            "javaScriptPreprocessingFile": (ext?.javaScriptPreprocessingFile).jsonOrNull,
            "extensionAttributes": PlistValue.dictionary(ext?.attributes ?? [:]).jsonObject,
            "activationRule": rule,
            "entitlements": describe(entitlements),
            "effectivePolicy": effective,
        ]
    }

    static func describe(_ e: Entitlements) -> [String: Any] {
        ["applicationGroups": e.applicationGroups, "requested": e.requestedKeys, "raw": PlistValue.dictionary(e.raw).jsonObject]
    }

    /// A short human summary; `--json` has everything.
    static func text(_ d: [String: Any], indent: String = "") -> String {
        func s(_ key: String) -> String { (d[key] as? String) ?? "-" }
        var lines = [
            "\(indent)\(s("kind")): \(s("path"))",
            "\(indent)  identifier:      \(s("bundleIdentifier"))",
            "\(indent)  name:            \(s("name"))",
            "\(indent)  extension point: \(s("extensionPoint"))",
            "\(indent)  activation rule: \(((d["activationRule"] as? [String: Any])?["kind"] as? String) ?? "none")",
        ]
        if let policy = d["effectivePolicy"] as? [String: Any], let p = policy["policy"] as? [String: Any],
            let memory = p["memory"] as? [String: Any]
        {
            let hard = (memory["activeHardLimitBytes"] as? Int64).map { ByteSize(bytes: $0).description } ?? "-"
            lines.append(
                "\(indent)  policy:          \(p["title"] as? String ?? "-"), hard limit \(hard), deadline \(p["launchDeadlineMs"] as? Int64 ?? 0) ms, \((policy["syscalls"] as? [Any])?.count ?? 0) syscalls denied"
            )
        }
        for f in (d["findings"] as? [[String: Any]]) ?? [] {
            lines.append("\(indent)  \(f["severity"] ?? ""): \(f["keyPath"] ?? ""): \(f["message"] ?? "")")
        }
        for plugIn in (d["plugIns"] as? [[String: Any]]) ?? [] {
            lines.append(text(plugIn, indent: indent + "  "))
        }
        return lines.joined(separator: "\n")
    }
}
