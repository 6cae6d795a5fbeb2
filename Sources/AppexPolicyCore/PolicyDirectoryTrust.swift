#if canImport(Glibc)
import Glibc
#endif

/// Whether root may take policies from a directory: a policy decides what every extension
/// may do, so for a root process the directory, every directory above it, its `extension-points`
/// and `syscall-groups` and every policy file in them must belong to root and be writable by
/// no one else (a directory writable by others but sticky, such as /tmp, only protects what
/// root owns in it, which is what is checked below it). Anyone who can write there could
/// otherwise set root's policy. Other users may load any directory they can read: what they
/// run is theirs.
///
/// Plain POSIX calls, no Foundation: the cached path of every `appex run` asks too.
package enum PolicyDirectoryTrust {
    /// Why `dir` may not be used, or nil when it may (always nil for a non-root process).
    package static func problem(_ dir: String, euid: uid_t = geteuid()) -> String? {
        guard euid == 0 else { return nil }
        guard let real = PolicyLocator.resolved(dir) else { return nil }  // the loader reports it
        // "/" and each directory above `real`; `real` itself is checked with its contents.
        var path = ""
        for part in real.split(separator: "/").dropLast() {
            if let problem = problem(path: path.isEmpty ? "/" : path, parent: true) { return problem }
            path += "/" + String(part)
        }
        if let problem = problem(path: path.isEmpty ? "/" : path, parent: true) { return problem }
        if let problem = problem(path: real, parent: false) { return problem }
        var names = ["defaults.yaml"]
        for sub in ["extension-points", "syscall-groups"] {
            names.append(sub)
            names += PolicyFingerprint.yamlNames(in: real + "/" + sub).map { sub + "/" + $0 }
        }
        for name in names {
            if let problem = problem(path: real + "/" + name, parent: false) { return problem }
        }
        return nil
    }

    /// `path`'s owner and mode (what it names, links followed: what the loader reads); a
    /// missing file is the loader's business. `parent`: an ancestor, which may be writable by
    /// others when sticky.
    static func problem(path: String, parent: Bool) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        if st.st_uid != 0 {
            return "\(path) belongs to uid \(st.st_uid), not root: root takes policies only from files and directories only root can change"
        }
        let sticky = st.st_mode & S_ISVTX != 0 && st.st_mode & S_IFMT == S_IFDIR
        if st.st_mode & 0o022 != 0 && !(parent && sticky) {
            let mode = String(st.st_mode & 0o7777, radix: 8)
            return "\(path) is writable by group or others (mode \(mode)): root takes policies only from files and directories only root can change"
        }
        return nil
    }

    /// The first problem among `directories`, as a policy error.
    package static func check(_ directories: [String]) throws {
        for dir in directories {
            if let problem = problem(dir) { throw PolicyError(file: dir, message: "policy directory refused: " + problem) }
        }
    }
}
