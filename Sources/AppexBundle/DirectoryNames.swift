#if canImport(Glibc)
import Glibc
#endif

/// The entry names of a directory, `.` and `..` included, in the order the kernel gives them;
/// nil when it cannot be opened. Plain `readdir`, no Foundation: the policy fingerprint, the
/// cache pruning and a bundle's entitlements lookup run on every `appex run`.
package func directoryNames(_ dir: String) -> [String]? {
    guard let d = opendir(dir) else { return nil }
    defer { closedir(d) }
    var names: [String] = []
    while let entry = readdir(d) {
        // The name as a C string (strlen), not a byte-by-byte prefix of the 256-byte field:
        // this lists the policy directories on every `appex run`.
        names.append(
            withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            })
    }
    return names
}
