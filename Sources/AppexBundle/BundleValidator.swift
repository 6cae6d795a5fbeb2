import AppexELF

#if canImport(Glibc)
import Glibc
#endif

/// Apple-style checks on an `Info.plist` and, for a bundle on disk, on its files.
///
/// Activation-rule checks live in `AppexActivation` and policy checks in `AppexPolicy`; the
/// `appex validate` command merges all three. Every code is listed in Docs/bundles.md.
public enum BundleValidator {
    /// Keys an installed bundle must have resolved: Appex acts on them.
    static let identityKeys = ["CFBundleIdentifier", "CFBundleExecutable"]

    /// Checks that need only the plist.
    public static func validate(info: InfoPlist, extraExtensionPoints: Set<String> = []) -> [Finding] {
        var out = info.readFindings
        let root = PlistKeyPath.root

        for key in identityKeys {
            let path = root.appending(key)
            guard let value = info.raw[key] else {
                out.append(.error("bundle.missing-key", at: path, "required key is missing"))
                continue
            }
            guard let s = value.stringValue else { continue }  // type finding already recorded
            let vars = BuildVariables.references(in: s)
            if !vars.isEmpty {
                out.append(
                    .error(
                        "bundle.build-variable", at: path,
                        "unresolved build variable \(describe(vars)) in \"\(s)\": this is an Xcode source Info.plist; pass --define NAME=VALUE as Xcode would"
                    ))
            } else if s.isEmpty {
                out.append(.error("bundle.empty-value", at: path, "value is empty"))
            }
        }
        if let id = info.bundleIdentifier, BuildVariables.references(in: id).isEmpty, !id.isEmpty,
            let problem = BundleIdentifierRules.pathSafetyProblem(id)
        {
            out.append(
                .error(
                    "bundle.identifier-unsafe", at: root.appending("CFBundleIdentifier"),
                    "bundle identifier \"\(id)\" \(problem); it names the extension's data directory"))
        }
        if let executable = info.executable, BuildVariables.references(in: executable).isEmpty,
            executable.contains("/") || executable == ".." || executable == "."
        {
            out.append(
                .error(
                    "bundle.executable-name", at: root.appending("CFBundleExecutable"),
                    "\"\(executable)\" must be a file name inside the bundle, not a path"))
        }
        switch info.packageType {
        case nil where info.raw["CFBundlePackageType"] == nil:
            out.append(
                .warning(
                    "bundle.missing-key", at: root.appending("CFBundlePackageType"),
                    "missing; an app extension's package type is \"XPC!\""))
        case let type? where type != "XPC!" && BuildVariables.references(in: type).isEmpty:
            out.append(
                .warning(
                    "bundle.package-type", at: root.appending("CFBundlePackageType"),
                    "\"\(type)\" is not \"XPC!\", the package type of an app extension"))
        default:
            break
        }
        if info.raw["CFBundleVersion"] == nil {
            out.append(.warning("bundle.missing-key", at: root.appending("CFBundleVersion"), "missing; launch history cannot tell builds apart"))
        }
        if info.backgroundModes != nil {
            out.append(
                .error(
                    "bundle.background-modes", at: root.appending("UIBackgroundModes"),
                    "app extensions cannot declare background modes (App Review rejects them)"))
        }

        out += validateExtension(info, extraExtensionPoints: extraExtensionPoints)
        out += placeholderWarnings(
            info.raw, skipping: Set(identityKeys.map { root.appending($0) } + [NSExtensionDictionary.keyPath.appending("NSExtensionPointIdentifier")])
        )
        return out
    }

    static func validateExtension(_ info: InfoPlist, extraExtensionPoints: Set<String>) -> [Finding] {
        var out: [Finding] = []
        let path = NSExtensionDictionary.keyPath
        guard info.raw["NSExtension"] != nil else {
            return [.error("extension.missing", at: path, "no NSExtension dictionary: this is not an app extension")]
        }
        guard let ext = info.extensionInfo else { return out }  // wrong type, already reported
        let pointPath = path.appending("NSExtensionPointIdentifier")
        guard let point = ext.pointIdentifier else {
            if ext.raw["NSExtensionPointIdentifier"] == nil {
                out.append(.error("extension.missing-point", at: pointPath, "required key is missing"))
            }
            return out
        }
        let vars = BuildVariables.references(in: point)
        if !vars.isEmpty {
            out.append(.error("extension.build-variable", at: pointPath, "unresolved build variable \(describe(vars))"))
        } else if let entry = ExtensionPointCatalog.entry(for: point) {
            let hasRule = ext.activationRule != .none
            if hasRule && !entry.usesActivationRule {
                out.append(
                    .warning(
                        "activation.unused", at: ActivationRuleSpec.keyPath,
                        "\(entry.title) extensions are not chosen by activation rule; the rule is ignored"))
            } else if !hasRule && entry.usesActivationRule && ext.attributes["NSExtensionActivationRule"] == nil {
                out.append(
                    .warning(
                        "activation.missing", at: ActivationRuleSpec.keyPath,
                        "\(entry.title) extension without an activation rule is never offered for any item"))
            }
        } else if !extraExtensionPoints.contains(point) {
            out.append(
                .error(
                    "extension.unknown-point", at: pointPath,
                    "\"\(point)\" is neither an extension point Apple defines nor one a policy in Policies/ covers"))
        }
        return out
    }

    /// Build variables in keys Appex only displays: the bundle still loads, with a warning.
    static func placeholderWarnings(_ dict: [String: PlistValue], skipping: Set<PlistKeyPath>) -> [Finding] {
        var out: [Finding] = []
        func walk(_ value: PlistValue, _ path: PlistKeyPath) {
            switch value {
            case .string(let s):
                let vars = BuildVariables.references(in: s)
                if !vars.isEmpty && !skipping.contains(path) {
                    out.append(.warning("plist.build-variable", at: path, "unresolved build variable \(describe(vars)); shown as written"))
                }
            case .array(let a):
                for (i, element) in a.enumerated() { walk(element, path.appending(index: i)) }
            case .dictionary(let d):
                for key in d.keys.sorted() { walk(d[key]!, path.appending(key)) }
            default:
                break
            }
        }
        walk(.dictionary(dict), .root)
        return out
    }

    /// Checks of a bundle on disk: the plist checks, then files, containment and entitlements.
    /// `systemPaths`: the host directories the extension's policy shows read-only; an absolute
    /// RUNPATH entry outside them is an error.
    public static func validate(
        bundle: ExtensionBundle, extraExtensionPoints: Set<String> = [],
        systemPaths: [String] = RunpathCheck.defaultSystemPaths
    ) -> [Finding] {
        var out = validate(info: bundle.info, extraExtensionPoints: extraExtensionPoints)
        out += validateExecutable(bundle, systemPaths: systemPaths)
        if let appID = bundle.containingAppIdentifier, let id = bundle.info.bundleIdentifier,
            BuildVariables.references(in: id).isEmpty, !id.hasPrefix(appID + ".")
        {
            out.append(
                .error(
                    "bundle.identifier-prefix", at: PlistKeyPath.root.appending("CFBundleIdentifier"),
                    "\"\(id)\" must start with the containing app's identifier \"\(appID).\""))
        }
        out += bundle.entitlements.validate()
        return out
    }

    /// The executable, opened beneath the bundle without following links (a link to a host
    /// file, or a FIFO that would hang the reader, is refused); everything after reads that fd.
    static func validateExecutable(_ bundle: ExtensionBundle, systemPaths: [String]) -> [Finding] {
        let keyPath = PlistKeyPath.root.appending("CFBundleExecutable")
        guard let name = bundle.info.executable, BuildVariables.references(in: name).isEmpty,
            bundle.executablePath != nil
        else { return [] }  // reported by the plist checks
        let file: BundleFileAccess.OpenFile
        do {
            file = try BundleFileAccess.openRegularFile(named: name, in: bundle.path)
        } catch .missing {
            return [.error("executable.missing", at: keyPath, "\"\(name)\" does not exist in the bundle")]
        } catch .notRegularFile(kind: "directory") {
            return [.error("executable.not-a-file", at: keyPath, "\"\(name)\" is a directory")]
        } catch {
            return [.error("executable.not-a-file", at: keyPath, "\"\(name)\" \(error)")]
        }
        defer { close(file.fd) }
        var out: [Finding] = []
        if !file.isExecutable {
            out.append(.error("executable.not-executable", at: keyPath, "\"\(name)\" is not executable (chmod +x)"))
        }
        let head = BundleFileAccess.prefix(file, count: 20)
        if ELFHeader.isMachO(head) {
            out.append(.error("executable.architecture", at: keyPath, "\"\(name)\" is a Mach-O binary, built for Apple platforms, not Linux"))
        } else if let elf = ELFHeader.parse(head) {
            if elf.machine != ELFHeader.hostMachine {
                out.append(
                    .error(
                        "executable.architecture", at: keyPath,
                        "\"\(name)\" is built for \(ELFHeader.machineName(elf.machine)); this machine is \(ELFHeader.machineName(ELFHeader.hostMachine))"
                    ))
            }
            for entry in RunpathCheck.refused(ELFRunpath.entries(fd: file.fd), systemPaths: systemPaths) {
                out.append(
                    .error(
                        "executable.runpath", at: keyPath,
                        "\"\(name)\" has RUNPATH entry \"\(entry)\", outside the bundle and the policy's system paths (\(systemPaths.joined(separator: ", "))); the sandbox would not show it. Use $ORIGIN-relative entries or link statically"
                    ))
            }
        }
        return out
    }

    static func describe(_ vars: [String]) -> String {
        vars.map { "$(\($0))" }.joined(separator: ", ")
    }
}
