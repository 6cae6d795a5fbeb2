#if canImport(Glibc)
import Glibc
#endif

/// Errors reading a property-list file. They name the file; the plist parser's own message
/// says where inside it the syntax broke.
public enum PropertyListFileError: Error, Sendable, CustomStringConvertible, Equatable {
    case unreadable(path: String, reason: String)
    case malformed(path: String, reason: String)
    case notADictionary(path: String, found: String)
    case unsupportedValue(path: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "\(path): cannot read: \(reason)"
        case .malformed(let path, let reason): "\(path): not a property list: \(reason)"
        case .notADictionary(let path, let found): "\(path): top level is \(found), expected dictionary"
        case .unsupportedValue(let path): "\(path): contains a value a property list cannot hold"
        }
    }
}

/// Reads XML, binary or OpenStep property lists (`PropertyListReader`), returning a typed
/// top-level dictionary.
public enum PropertyListFile {
    /// Property lists larger than this are refused before parsing: Info.plists are kilobytes.
    public static let maximumSize = 4 << 20

    /// Reads the file without following a symbolic link in its last component and without
    /// blocking on a FIFO: a hostile bundle's `Info.plist` may be either.
    public static func readDictionary(at path: String) throws -> [String: PlistValue] {
        let bytes: [UInt8]
        do {
            let file = try BundleFileAccess.openRegularFile(path: path)
            defer { close(file.fd) }
            bytes = try BundleFileAccess.readAll(file, limit: maximumSize)
        } catch .tooLarge {
            throw PropertyListFileError.unreadable(path: path, reason: "larger than \(maximumSize) bytes")
        } catch {
            throw PropertyListFileError.unreadable(path: path, reason: "\(error)")
        }
        return try parseDictionary(bytes, path: path)
    }

    /// Reads `path` and substitutes Xcode build settings in every string (see `BuildVariables`).
    public static func readDictionary(at path: String, buildSettings: [String: String]) throws -> [String: PlistValue] {
        let dict = try readDictionary(at: path)
        return buildSettings.isEmpty ? dict : dict.mapValues { BuildVariables.substitute($0, with: buildSettings) }
    }

    public static func parseDictionary(_ bytes: [UInt8], path: String) throws -> [String: PlistValue] {
        let value: PlistValue
        do {
            value = try PropertyListReader.parse(bytes)
        } catch {
            if error.unsupportedValue { throw PropertyListFileError.unsupportedValue(path: path) }
            throw PropertyListFileError.malformed(path: path, reason: error.message)
        }
        guard case .dictionary(let dictionary) = value else {
            throw PropertyListFileError.notADictionary(path: path, found: value.typeName)
        }
        return dictionary
    }
}
