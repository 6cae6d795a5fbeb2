import AppexBundle
import AppexELF
import AppexTestSupport
import Foundation
import Testing

/// Synthetic bundles on disk, each broken in one way Apple's tools would catch.
@Suite struct BundleValidatorTests {
    /// A bundle whose executable is this test process's own binary: a real ELF for this machine.
    func makeBundle(
        _ dir: TemporaryDirectory, plist: String = infoPlistXML(), executable: Data? = nil,
        mode: Int = 0o755, name: String = "Share.appex"
    ) throws -> String {
        let elf = try executable ?? Data(contentsOf: URL(fileURLWithPath: "/proc/self/exe"))
        try dir.write("\(name)/Info.plist", plist)
        try dir.write("\(name)/share", elf, mode: mode)
        return dir.sub(name)
    }

    func codes(_ path: String, app: String? = nil) throws -> [String] {
        let bundle = try ExtensionBundle.load(path: path, containingAppIdentifier: app)
        return BundleValidator.validate(bundle: bundle).filter { $0.severity == .error }.map(\.code)
    }

    @Test func wellFormedBundleIsValid() throws {
        let dir = try TemporaryDirectory()
        let path = try makeBundle(dir)
        let bundle = try ExtensionBundle.load(path: path)
        let findings = BundleValidator.validate(bundle: bundle)
        #expect(!findings.hasErrors, "\(findings)")
        #expect(bundle.executablePath == path + "/share")
    }

    @Test func missingExecutable() throws {
        let dir = try TemporaryDirectory()
        try dir.write("Share.appex/Info.plist", infoPlistXML())
        #expect(try codes(dir.sub("Share.appex")) == ["executable.missing"])
    }

    @Test func nonExecutableFile() throws {
        let dir = try TemporaryDirectory()
        let path = try makeBundle(dir, mode: 0o644)
        // root passes access(X_OK) only when some execute bit is set, so 0644 fails for root too.
        #expect(try codes(path) == ["executable.not-executable"])
    }

    @Test func elfForAnotherArchitecture() throws {
        let dir = try TemporaryDirectory()
        var header = [UInt8](repeating: 0, count: 64)
        header[0...3] = [0x7F, 0x45, 0x4C, 0x46]
        header[4] = 2
        header[5] = 1
        let other: UInt16 = ELFHeader.hostMachine == 183 ? 62 : 183
        header[18] = UInt8(other & 0xFF)
        header[19] = UInt8(other >> 8)
        let path = try makeBundle(dir, executable: Data(header))
        #expect(try codes(path) == ["executable.architecture"])
        let bundle = try ExtensionBundle.load(path: path)
        let message = BundleValidator.validate(bundle: bundle).first { $0.code == "executable.architecture" }?.message ?? ""
        #expect(message.contains(ELFHeader.machineName(other)))
    }

    @Test func machOBinary() throws {
        let dir = try TemporaryDirectory()
        let path = try makeBundle(dir, executable: Data([0xCF, 0xFA, 0xED, 0xFE, 0, 0, 0, 0]))
        #expect(try codes(path) == ["executable.architecture"])
    }

    @Test func identifierMustCarryContainingAppPrefix() throws {
        let dir = try TemporaryDirectory()
        let path = try makeBundle(dir, plist: infoPlistXML(identifier: "com.other.share"))
        #expect(try codes(path, app: "com.example.host") == ["bundle.identifier-prefix"])
        #expect(try codes(path, app: "com.other").isEmpty)
    }

    @Test func containingAppLoadsPlugInsAndPassesItsIdentifier() throws {
        let dir = try TemporaryDirectory()
        try dir.write("Host.app/Info.plist", BareBundle.InfoPlist.app("com.example.host").xml)
        _ = try makeBundle(dir, name: "Host.app/PlugIns/Share.appex")
        try dir.write("Host.app/PlugIns/Broken.appex/Info.plist", "<plist><dict><key>x</key></plist>")
        #expect(ContainingApp.isContainingApp(dir.sub("Host.app")))
        let app = try ContainingApp.load(path: dir.sub("Host.app"))
        #expect(app.plugIns.count == 2)
        let broken = try #require(app.plugIns.first { $0.path.hasSuffix("Broken.appex") })
        guard case .failure(.malformed) = broken.result else {
            Issue.record("broken plug-in should fail to parse")
            return
        }
        let share = try #require(app.plugIns.first { $0.path.hasSuffix("Share.appex") })
        let bundle = try share.result.get()
        #expect(bundle.containingAppIdentifier == "com.example.host")
        #expect(!BundleValidator.validate(bundle: bundle).hasErrors)
    }

    @Test func backgroundModesAreRejected() throws {
        let info = InfoPlist(
            try PropertyListFile.parseDictionary(
                Array(
                    infoPlistXML(
                        extra: "<key>UIBackgroundModes</key><array><string>audio</string></array>"
                    ).utf8), path: "x"))
        let f = BundleValidator.validate(info: info).filter { $0.code == "bundle.background-modes" }
        #expect(f.count == 1 && f[0].severity == .error && f[0].keyPath.description == "UIBackgroundModes")
    }

    @Test func unknownExtensionPoint() throws {
        let info = InfoPlist(try PropertyListFile.parseDictionary(Array(infoPlistXML(point: "com.example.not-a-point").utf8), path: "x"))
        #expect(
            BundleValidator.validate(info: info).contains {
                $0.code == "extension.unknown-point" && $0.keyPath.description == "NSExtension:NSExtensionPointIdentifier"
            })
        // A platform's own extension point is known once a policy covers it.
        #expect(
            !BundleValidator.validate(info: info, extraExtensionPoints: ["com.example.not-a-point"]).contains { $0.code == "extension.unknown-point" }
        )
    }

    @Test(arguments: ["com.example/../../etc", "..", ".hidden", "com.example.sp ace", "com.exa\u{0}mple", ""])
    func pathUnsafeIdentifiersAreRefused(identifier: String) throws {
        let info = InfoPlist([
            "CFBundleIdentifier": .string(identifier), "CFBundleExecutable": .string("x"),
            "NSExtension": .dictionary(["NSExtensionPointIdentifier": .string("com.apple.widget-extension")]),
        ])
        let codes = BundleValidator.validate(info: info).filter { $0.severity == .error }.map(\.code)
        #expect(codes.contains("bundle.identifier-unsafe") || codes.contains("bundle.empty-value"), "\(codes)")
        #expect(throws: UnsafeIdentifierError.self) { try BundleIdentifierRules.requireSafe(identifier) }
    }

    @Test func wrongValueTypesAreReportedNotDropped() {
        let info = InfoPlist([
            "CFBundleIdentifier": .integer(7), "CFBundleExecutable": .string("x"),
            "NSExtension": .dictionary(["NSExtensionPointIdentifier": .array([])]),
        ])
        #expect(info.bundleIdentifier == nil)
        let types = info.readFindings.map(\.keyPath.description).sorted()
        #expect(types == ["CFBundleIdentifier", "NSExtension:NSExtensionPointIdentifier"])
        #expect(info.readFindings.allSatisfy { $0.code == "plist.type" && $0.severity == .error })
    }

    @Test func executableMayNotEscapeTheBundle() {
        let info = InfoPlist([
            "CFBundleIdentifier": .string("com.a.b"), "CFBundleExecutable": .string("../../bin/sh"),
            "NSExtension": .dictionary(["NSExtensionPointIdentifier": .string("com.apple.widget-extension")]),
        ])
        #expect(BundleValidator.validate(info: info).contains { $0.code == "bundle.executable-name" })
        #expect(ExtensionBundle(path: "/b", info: info).executablePath == nil)
    }

    @Test func malformedPlistNamesTheFile() throws {
        let dir = try TemporaryDirectory()
        try dir.write("bad.plist", "<?xml version=\"1.0\"?><plist><dict><key>a</key><string>x</dict></plist>")
        do {
            _ = try InfoPlist.load(path: dir.sub("bad.plist"))
            Issue.record("malformed plist loaded")
        } catch let error as PropertyListFileError {
            guard case .malformed(let path, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(path == dir.sub("bad.plist"))
        }
        try dir.write("array.plist", "<?xml version=\"1.0\"?><plist><array/></plist>")
        #expect(throws: PropertyListFileError.notADictionary(path: dir.sub("array.plist"), found: "array")) {
            try InfoPlist.load(path: dir.sub("array.plist"))
        }
    }

    @Test func binaryPlistLoads() throws {
        let dir = try TemporaryDirectory()
        let object: [String: Any] = [
            "CFBundleIdentifier": "com.example.bin",
            "NSExtension": [
                "NSExtensionPointIdentifier": "com.apple.share-services",
                "NSExtensionAttributes": ["NSExtensionActivationRule": ["NSExtensionActivationSupportsText": true]],
            ],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        try dir.write("Info.plist", data)
        let info = try InfoPlist.load(path: dir.sub("Info.plist"))
        #expect(info.bundleIdentifier == "com.example.bin")
        #expect(info.extensionInfo?.activationRule == .dictionary(["NSExtensionActivationSupportsText": .bool(true)]))
    }

    @Test func buildVariableParsing() {
        #expect(BuildVariables.references(in: "$(PRODUCT_MODULE_NAME).ShareViewController") == ["PRODUCT_MODULE_NAME"])
        #expect(BuildVariables.references(in: "${APP_NAME} ${BUILD_NUMBER}") == ["APP_NAME", "BUILD_NUMBER"])
        #expect(BuildVariables.references(in: "$(PRODUCT_NAME:rfc1034identifier)") == ["PRODUCT_NAME"])
        #expect(BuildVariables.references(in: "costs $5 (maybe") == [])
        #expect(BuildVariables.substitute("$(A).$(B)", with: ["A": "x"]) == "x.$(B)")
    }
}
