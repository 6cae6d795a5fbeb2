import AppexBundle
import AppexTestSupport
import Testing

/// Checks one plist against its manifest row; shared by the fixture and corpus suites.
func expectLoadsAsRecorded(_ file: String, in directory: ManifestDirectory) throws {
    let entry = try #require(directory.entry(file), "\(file) has no row in \(directory.tableName)")
    let info = try InfoPlist.load(path: directory.path(file))
    #expect(info.extensionInfo?.pointIdentifier == entry.extensionPoint)
    #expect(info.extensionInfo?.activationRule.kind == entry.specKind)
    // No type problems in the keys Appex reads.
    #expect(info.readFindings.isEmpty, "\(info.readFindings)")
    if let valid = entry.valid {
        let errors = BundleValidator.validate(info: info).filter { $0.severity == .error }
        #expect(errors.isEmpty == valid, "\(errors)")
    }
}
