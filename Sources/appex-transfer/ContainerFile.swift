import AppexTransferPlan

#if canImport(Glibc)
import Glibc
#endif

/// Files beneath the group directory appexd opened and handed over at descriptor 3. Names are
/// one component (TransferPlan.fileNameProblem: no `/`, not `..`), so `openat(O_NOFOLLOW)` on
/// the directory descriptor can neither leave it nor follow a link planted there.
struct ContainerDirectory {
    static let descriptor: Int32 = 3
    let fd: Int32

    struct FileError: Error, CustomStringConvertible {
        var description: String
    }

    func fail(_ what: String, _ name: String, _ code: Int32 = errno) -> FileError {
        FileError(description: "\(what) \(name): \(String(cString: strerror(code)))")
    }

    /// An existing regular file of ours, opened with `flags`.
    func openExisting(_ name: String, _ flags: Int32) throws -> (fd: Int32, size: Int64)? {
        try Self.check(name)
        let f = openat(fd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        if f < 0 {
            if errno == ENOENT { return nil }
            throw fail("open", name)
        }
        var st = stat()
        guard fstat(f, &st) == 0 else {
            let e = fail("fstat", name)
            close(f)
            throw e
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(f)
            throw fail("open", name, EINVAL)
        }
        return (f, Int64(st.st_size))
    }

    /// A new file (O_EXCL: never one that is there, link or not).
    func create(_ name: String) throws -> Int32 {
        try Self.check(name)
        let f = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o660)
        if f < 0 { throw fail("create", name) }
        return f
    }

    /// Moves the finished download into place (replacing a file, or a link itself, of that name).
    func rename(_ from: String, to name: String) throws {
        try Self.check(name)
        if renameat(fd, from, fd, name) != 0 { throw fail("rename to", name) }
    }

    func remove(_ name: String) {
        _ = unlinkat(fd, name, 0)
    }

    static func check(_ name: String) throws {
        // The partial file's name is the plan's name with a prefix and suffix: the same rule.
        let plain =
            name.hasPrefix(".") && name.hasSuffix(".appex-partial")
            ? String(name.dropFirst().dropLast(".appex-partial".count)) : name
        if let problem = TransferPlan.fileNameProblem(plain) { throw FileError(description: "file name \(name) \(problem)") }
    }
}
