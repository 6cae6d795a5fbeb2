import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A path made absolute against the working directory and normalized lexically (`.`, `..`,
/// repeated slashes), without following links: what `URL(fileURLWithPath:).standardizedFileURL`
/// gives, through swift-system instead of Foundation's URL, whose first use in a process
/// every `appex run` would pay.
public enum AbsolutePath {
    public static func of(_ path: String) -> String {
        var result = FilePath(path)
        if result.isRelative, let cwd = getcwd(nil, 0) {
            defer { free(cwd) }
            result = FilePath(String(cString: cwd)).pushing(result)
        }
        return result.lexicallyNormalized().string
    }
}
