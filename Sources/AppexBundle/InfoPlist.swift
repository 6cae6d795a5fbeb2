/// The parts of an extension's `Info.plist` that Appex uses, typed, plus the raw dictionary.
///
/// Building the model never fails: a value of the wrong type becomes nil and a finding in
/// `readFindings`, so a real-world plist with one odd key is still described in full.
public struct InfoPlist: Sendable, Equatable {
    public var raw: [String: PlistValue]

    public var bundleIdentifier: String?
    public var displayName: String?
    public var bundleName: String?
    public var executable: String?
    public var shortVersion: String?
    public var version: String?
    public var packageType: String?
    /// Present at all is a finding: App Review rejects extensions that declare background modes.
    public var backgroundModes: [String]?
    public var extensionInfo: NSExtensionDictionary?
    /// `UTExportedTypeDeclarations` / `UTImportedTypeDeclarations`, for the UTI graph.
    public var exportedTypeDeclarations: [[String: PlistValue]]
    public var importedTypeDeclarations: [[String: PlistValue]]

    /// Type problems met while reading the typed fields.
    public var readFindings: [Finding]

    /// `CFBundleDisplayName`, else `CFBundleName`: what a share sheet would show.
    public var name: String? { displayName ?? bundleName }

    public init(_ dict: [String: PlistValue]) {
        var reader = TypedReader()
        let root = PlistKeyPath.root
        raw = dict
        bundleIdentifier = reader.string("CFBundleIdentifier", in: dict, at: root)
        displayName = reader.string("CFBundleDisplayName", in: dict, at: root)
        bundleName = reader.string("CFBundleName", in: dict, at: root)
        executable = reader.string("CFBundleExecutable", in: dict, at: root)
        shortVersion = reader.string("CFBundleShortVersionString", in: dict, at: root)
        version = reader.string("CFBundleVersion", in: dict, at: root)
        packageType = reader.string("CFBundlePackageType", in: dict, at: root)
        backgroundModes = dict["UIBackgroundModes"] == nil ? nil : (reader.stringArray("UIBackgroundModes", in: dict, at: root) ?? [])
        exportedTypeDeclarations = reader.dictionaryArray("UTExportedTypeDeclarations", in: dict, at: root)
        importedTypeDeclarations = reader.dictionaryArray("UTImportedTypeDeclarations", in: dict, at: root)
        if let ns = reader.dictionary("NSExtension", in: dict, at: root) {
            extensionInfo = NSExtensionDictionary(ns, reader: &reader)
        } else {
            extensionInfo = nil
        }
        readFindings = reader.findings
    }

    /// Loads `path`, substituting the given build settings first (see `BuildVariables`).
    public static func load(path: String, buildSettings: [String: String] = [:]) throws -> InfoPlist {
        InfoPlist(try PropertyListFile.readDictionary(at: path, buildSettings: buildSettings))
    }
}

/// The `NSExtension` dictionary.
public struct NSExtensionDictionary: Sendable, Equatable {
    public static let keyPath: PlistKeyPath = "NSExtension"

    public var raw: [String: PlistValue]
    public var pointIdentifier: String?
    public var principalClass: String?
    public var mainStoryboard: String?
    public var attributes: [String: PlistValue]
    public var activationRule: ActivationRuleSpec
    public var javaScriptPreprocessingFile: String?

    init(_ ns: [String: PlistValue], reader: inout TypedReader) {
        let path = Self.keyPath
        raw = ns
        pointIdentifier = reader.string("NSExtensionPointIdentifier", in: ns, at: path)
        principalClass = reader.string("NSExtensionPrincipalClass", in: ns, at: path)
        mainStoryboard = reader.string("NSExtensionMainStoryboard", in: ns, at: path)
        let attributesPath = path.appending("NSExtensionAttributes")
        attributes = reader.dictionary("NSExtensionAttributes", in: ns, at: path) ?? [:]
        javaScriptPreprocessingFile = reader.string("NSExtensionJavaScriptPreprocessingFile", in: attributes, at: attributesPath)
        switch attributes["NSExtensionActivationRule"] {
        case nil:
            activationRule = .none
        case .dictionary(let d)?:
            activationRule = .dictionary(d)
        case .string(let s)?:
            activationRule = .predicate(s)
        case let other?:
            activationRule = .none
            reader.appendFinding(
                .error(
                    "activation.rule-type", at: ActivationRuleSpec.keyPath,
                    "expected dictionary or predicate string, found \(other.typeName)"))
        }
    }
}
