#if canImport(Glibc)
import Glibc
#endif

/// The entry names of a directory, `.` and `..` included, in the order the kernel gives them;
/// nil when it cannot be opened. Plain `readdir`, no Foundation: the policy fingerprint and
/// the cache pruning run on every `appex run`.
func directoryNames(_ dir: String) -> [String]? {
    guard let d = opendir(dir) else { return nil }
    defer { closedir(d) }
    var names: [String] = []
    while let entry = readdir(d) {
        names.append(withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        })
    }
    return names
}
