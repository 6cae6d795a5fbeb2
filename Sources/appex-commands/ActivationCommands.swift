import AppexActivation
import AppexBundle
import AppexCommandSupport
import AppexRun
import ArgumentParser
import Foundation

/// `appex activation …`: evaluate activation rules by hand.
struct ActivationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activation",
        abstract: "Evaluate activation rules against request items.",
        subcommands: [ActivationEvalCommand.self]
    )
}

/// A bad rule or bad items (ExitStatus.dataError), or `path` that is not there (noInput).
private func failInput(_ lines: [String], path: String? = nil) -> CommandFailure {
    let missing = path.map { $0 != "-" && !FileManager.default.fileExists(atPath: $0) } ?? false
    return CommandFailure(missing ? .noInput : .dataError, lines: lines)
}

private func note(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// `appex activation eval --plist INFO_PLIST --items ITEMS_JSON` (or `--rule STRING`).
/// Prints `true` or `false` and exits 0; exits 2 with a located error for a bad rule or items.
struct ActivationEvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Print true if the items activate the rule, false if not (the reason goes to stderr).",
        discussion: """
            ITEMS_JSON: {"extensionItems": [{"attachments": [{"registeredTypeIdentifiers": ["public.jpeg"]}], \
            "attributedContentText": "optional"}]}. Use - to read it from standard input.
            Exit status: 0 with true/false; 65 for an invalid rule, plist or items payload; 66 for a missing file.
            """
    )

    @Option(help: ArgumentHelp("An Info.plist whose NSExtensionActivationRule to evaluate.", valueName: "INFO_PLIST"))
    var plist: String?

    @Option(help: ArgumentHelp("A predicate rule given inline instead of --plist.", valueName: "STRING"))
    var rule: String?

    @Option(help: ArgumentHelp("The request items as JSON (a path, or - for stdin).", valueName: "ITEMS_JSON"))
    var items: String

    @OptionGroup var buildSettings: BuildSettingOptions

    func validate() throws {
        if (plist == nil) == (rule == nil) { throw ValidationError("give exactly one of --plist or --rule") }
    }

    func run() throws {
        var compiled: ActivationRule
        if let rule {
            switch ActivationCLI.compile(rule) {
            case .success(let r): compiled = r
            case .failure(let error):
                throw failInput(
                    ["error: --rule:\(error.location.line):\(error.location.column): \(error.message) [\(error.code)]"]
                        + ActivationCLI.caret(rule, error.location))
            }
        } else if let plist {
            let info: InfoPlist
            do {
                info = try InfoPlist.load(path: plist, buildSettings: try buildSettings.settings())
            } catch {
                throw failInput(["error: \(plist): \(error)"], path: plist)
            }
            let spec = info.extensionInfo?.activationRule ?? .none
            let (rule, ruleFindings) = Activation.rule(for: info)
            var findings = ruleFindings
            findings += info.readFindings.filter { $0.code.hasPrefix("activation.") }
            for f in findings where f.severity == .warning { note("\(plist): \(f)") }
            let errors = findings.filter { $0.severity == .error }
            guard let rule, errors.isEmpty else {
                throw failInput(errors.map { "\(plist): \($0)" })
            }
            if case .none = spec { note("note: \(plist) declares no NSExtensionActivationRule; every request activates it") }
            compiled = rule
        } else {
            throw ValidationError("give exactly one of --plist or --rule")
        }

        var request = ActivationItems(extensionItems: [])
        switch ActivationCLI.loadItems(items) {
        case .success(let r): request = r
        case .failure(let error): throw failInput(["error: \(items): \(error)"], path: items)
        }
        do {
            let result = try compiled.evaluate(request)
            print(result.isActivated ? "true" : "false")
            if let reason = result.reason { note("reason: \(reason)") }
        } catch {
            throw failInput(["error: \(items): \(error)"])
        }
    }
}

/// `appex extensions-for PATH… --item UTI --file NAME`: which extensions a share sheet would
/// offer for these items.
struct ExtensionsForCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extensions-for",
        abstract: "List the extensions a share sheet would offer.",
        discussion: """
            List the extensions whose activation rule accepts the given items, like a share sheet. \
            PATH is an .appex bundle, a containing .app directory whose PlugIns/ holds .appex bundles, \
            or a bare Info.plist. All --item/--file attachments and --text go into one extension item, \
            as a share sheet sends them. Extensions without an NSExtensionActivationRule (widgets, \
            keyboards, …) do not take items and are never listed.
            """
    )

    @Argument(help: ArgumentHelp("Bundles, containing apps or Info.plist files.", valueName: "PATH"))
    var paths: [String]

    @Option(name: .customLong("item"), help: ArgumentHelp("An attachment with this type identifier (repeatable).", valueName: "UTI"))
    var itemTypes: [String] = []

    @Option(name: .customLong("file"), help: ArgumentHelp("An attachment typed from this file name's extension (repeatable).", valueName: "NAME"))
    var files: [String] = []

    @Option(help: ArgumentHelp("Content text of the item (NSExtensionActivationSupportsText).", valueName: "TEXT"))
    var text: String?

    @Option(help: ArgumentHelp("Items as JSON instead of --item/--file/--text (a path, or - for stdin).", valueName: "ITEMS_JSON"))
    var items: String?

    @Flag(help: "Also list the extensions that would not activate, with the reason.")
    var all = false

    @Flag(help: "Print JSON.")
    var json = false

    @OptionGroup var buildSettings: BuildSettingOptions

    func validate() throws {
        if items != nil && !(itemTypes.isEmpty && files.isEmpty && text == nil) {
            throw ValidationError("--items replaces --item, --file and --text; give one or the other")
        }
    }

    func run() throws {
        var request = ActivationItems(extensionItems: [])
        if let items {
            switch ActivationCLI.loadItems(items) {
            case .success(let r): request = r
            case .failure(let error): throw failInput(["error: \(items): \(error)"], path: items)
            }
        } else {
            let graph = UTTypeGraph.system
            var attachments = itemTypes.map { ActivationAttachment(registeredTypeIdentifiers: [$0]) }
            attachments += files.map { name in
                ActivationAttachment(
                    registeredTypeIdentifiers: graph.types(forFileName: name),
                    suggestedName: (name as NSString).lastPathComponent)
            }
            request = ActivationItems(extensionItems: [ActivationItem(attachments: attachments, attributedContentText: text)])
            do {
                try request.validate()
            } catch {
                throw failInput(["error: \(error)"])
            }
        }

        let settings = try buildSettings.settings()
        var bundles: [ExtensionBundle] = []
        var loadErrors: [String] = []
        for path in paths {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
                loadErrors.append("error: \(path): no such file or directory")
                continue
            }
            do {
                if isDir.boolValue && ContainingApp.isContainingApp(path) {
                    let app = try ContainingApp.load(path: path, buildSettings: settings)
                    for (p, result) in app.plugIns {
                        switch result {
                        case .success(let b): bundles.append(b)
                        case .failure(let e): loadErrors.append("error: \(p): \(e)")
                        }
                    }
                } else if isDir.boolValue {
                    bundles.append(try ExtensionBundle.load(path: path, buildSettings: settings))
                } else {
                    let info = try InfoPlist.load(path: path, buildSettings: settings)
                    bundles.append(ExtensionBundle(path: path, info: info))
                }
            } catch {
                loadErrors.append("error: \(path): \(error)")
            }
        }

        var rows: [[String: Any]] = []
        for bundle in bundles {
            let name = bundle.info.name ?? (bundle.path as NSString).lastPathComponent
            let result: ActivationResult
            if case .none = bundle.info.extensionInfo?.activationRule ?? .none {
                result = .notActivated("declares no NSExtensionActivationRule, so it does not take items")
            } else {
                let (rule, findings) = Activation.rule(for: bundle)
                if let rule {
                    do {
                        result = try rule.evaluate(request)
                    } catch {
                        result = .notActivated("\(error)")
                    }
                } else {
                    let first = findings.first { $0.severity == .error }
                    result = .notActivated("invalid activation rule: \(first.map { "\($0.keyPath): \($0.message)" } ?? "unknown")")
                }
            }
            guard all || result.isActivated else { continue }
            rows.append([
                "name": name,
                "bundleIdentifier": bundle.info.bundleIdentifier.jsonOrNull,
                "extensionPoint": bundle.info.extensionInfo?.pointIdentifier.jsonOrNull ?? NSNull(),
                "path": bundle.path,
                "activated": result.isActivated,
                "reason": result.reason.jsonOrNull,
            ])
        }

        if json {
            try JSONOutput.print(["extensions": rows, "errors": loadErrors])
        } else {
            for row in rows {
                let name = row["name"] as? String ?? "?"
                let id = (row["bundleIdentifier"] as? String).map { " (\($0))" } ?? ""
                let path = row["path"] as? String ?? ""
                if row["activated"] as? Bool == true {
                    print("\(name)\(id)  \(path)")
                } else {
                    print("- \(name)\(id)  \(path): \(row["reason"] as? String ?? "")")
                }
            }
            if rows.isEmpty && loadErrors.isEmpty {
                print("no extension activates for these items (--all shows why each did not)")
            }
            for e in loadErrors { note(e) }
        }
        if !loadErrors.isEmpty {
            let missing = paths.contains { !FileManager.default.fileExists(atPath: $0) }
            throw ExitCode((missing ? ExitStatus.noInput : .dataError).rawValue)
        }
    }
}

enum ActivationCLI {
    static func loadItems(_ source: String) -> Result<ActivationItems, ItemsError> {
        do { return .success(try readItems(source)) } catch { return .failure(error) }
    }

    static func compile(_ rule: String) -> Result<ActivationRule, RuleError> {
        do { return .success(try ActivationRule.compile(predicate: rule)) } catch { return .failure(error) }
    }

    /// Reads ITEMS_JSON from a path or stdin (`-`), capped at the payload limit.
    static func readItems(_ source: String) throws(ItemsError) -> ActivationItems {
        let data: Data
        if source == "-" {
            data = FileHandle.standardInput.readData(ofLength: ActivationItems.Limits.maximumJSONBytes + 1)
        } else {
            guard let handle = FileHandle(forReadingAtPath: source) else {
                throw ItemsError(path: "$", message: "cannot read \(source)")
            }
            defer { try? handle.close() }
            data = handle.readData(ofLength: ActivationItems.Limits.maximumJSONBytes + 1)
        }
        return try ActivationItems.decode(json: data)
    }

    /// The source line of an error with a caret under the column.
    static func caret(_ source: String, _ at: RuleLocation) -> [String] {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        guard at.line >= 1, at.line <= lines.count else { return [] }
        let line = String(lines[at.line - 1]).replacingOccurrences(of: "\t", with: " ")
        guard line.utf8.count <= 200 else { return [] }
        let pad = String(repeating: " ", count: max(0, at.column - 1))
        return ["  " + line, "  " + pad + "^"]
    }
}
