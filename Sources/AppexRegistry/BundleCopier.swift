import AppexBundle

#if canImport(Glibc)
import Glibc
#endif

/// Copies a hostile source tree into the registry's staging directory: regular files and
/// directories only, within `InstallLimits`, digesting what it writes.
///
/// Each entry is examined with `fstatat(AT_SYMLINK_NOFOLLOW)` beneath its parent's fd and
/// opened with `O_NOFOLLOW`; a regular file is opened `O_NONBLOCK | O_NOCTTY` (a FIFO swapped in
/// after the stat cannot make the open hang) and re-checked on the fd (type, device, inode)
/// before a byte is read. Refused, each with a finding naming its path inside the source:
/// - symbolic links, wherever they point: the copy never resolves a link the author controls;
/// - FIFOs, sockets and devices;
/// - hard-linked files: a link to a file the author cannot read would be published otherwise;
/// - names that are not UTF-8, nesting or sizes over `InstallLimits`.
///
/// Every call that looks into the source (stat, open, readlink) is made with the requester's
/// identity when there is one (`ThreadFileIdentity`): what that user could not reach is
/// refused as `install.unreadable`, naming the entry.
///
/// The copy never widens a mode: each file and directory keeps its source's permission bits
/// without group and other write, and without setuid, setgid or sticky (a 0600 file stays
/// 0600, a 0750 executable 0750); owned by root when we are root; every file and directory
/// fsynced. After the first finding the walk goes on (to report every problem) but stops
/// copying bytes: the install is refused anyway.
struct BundleCopier {
    /// The requester's identity for looking into the source; nil: our own.
    let reader: ThreadFileIdentity?
    private(set) var findings: [Finding] = []
    private(set) var totalBytes: Int64 = 0
    private(set) var entries = 0
    /// A limit was hit: the walk stops.
    private(set) var exhausted = false

    /// Where an entry is: its path inside the source (for findings) and inside its bundle
    /// (for the digest, so a bundle digests alike whether installed bare or from an app).
    struct Location {
        var source: String
        var bundle: String

        func appending(_ name: String) -> Location {
            Location(
                source: source.isEmpty ? name : source + "/" + name,
                bundle: bundle.isEmpty ? name : bundle + "/" + name)
        }
    }

    init(reader: ThreadFileIdentity? = nil) {
        self.reader = reader
    }

    /// The mode a copy gets: the source's permission bits, never more (no group or other
    /// write, no setuid, setgid or sticky).
    static func copiedMode(_ source: mode_t) -> mode_t { source & 0o755 }

    /// The mode of the directory actually opened (what was stat'ed by name may have been swapped).
    static func mode(of fd: Int32, else seen: mode_t) -> mode_t {
        var st = stat()
        return fstat(fd, &st) == 0 ? st.st_mode : seen
    }

    /// A failed call on the source, in words; a refusal of access says whose it was.
    func failure(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        guard let reader, code == EACCES || code == EPERM else { return text }
        return text + " (read as \(reader.identity), who asked for the install)"
    }

    /// Runs a call that looks into the source with the requester's identity.
    func source<T>(_ call: () throws -> T) throws -> T {
        guard let reader else { return try call() }
        return try reader(call)
    }

    mutating func refuse(_ code: String, _ location: Location, _ message: String) {
        findings.append(.error(code, at: location.source.isEmpty ? .root : PlistKeyPath([location.source]), message))
    }

    /// Copies the bundle directory `name` beneath `parent` (found at `sourcePath` inside the
    /// source) to `destinationName` beneath `destination`. Returns the digest of what was
    /// written, or nil when something was refused (see `findings`).
    mutating func copyBundle(
        _ name: EntryName, in parent: Int32, sourcePath: String, to destinationName: EntryName,
        in destination: Int32, destinationPath: String
    ) throws -> ContentDigest? {
        let location = Location(source: sourcePath, bundle: "")
        let before = findings.count
        var st = stat()
        if try source({ name.withCString { fstatat(parent, $0, &st, AT_SYMLINK_NOFOLLOW) } }) != 0 {
            refuse("install.unreadable", location, "cannot stat: \(failure(errno))")
            return nil
        }
        switch st.st_mode & S_IFMT {
        case S_IFDIR:
            break
        case S_IFLNK:
            refuse("install.symlink", location, "the bundle itself is a symbolic link; install the directory it points to")
            return nil
        case S_IFREG:
            refuse("install.not-a-bundle", location, "is a file; a bundle is a directory")
            return nil
        default:
            refuse("install.special-file", location, "is a \(Self.kindName(st.st_mode)); a bundle is a directory")
            return nil
        }
        let sourceFD: Int32
        do {
            sourceFD = try source { try DirectoryFD.open(name, in: parent, path: sourcePath) }
        } catch let RegistryError.system(_, _, code) {
            refuse("install.unreadable", location, "cannot open: \(failure(code))")
            return nil
        }
        defer { DirectoryFD.close(sourceFD) }
        let destinationFD = try DirectoryFD.make(destinationName, in: destination, mode: 0o700, path: destinationPath)
        defer { DirectoryFD.close(destinationFD) }
        var digest = ContentDigest()
        try copyContents(of: sourceFD, into: destinationFD, at: location, digest: &digest, depth: 0, destinationPath: destinationPath)
        try DirectoryFD.own(destinationFD, mode: Self.copiedMode(Self.mode(of: sourceFD, else: st.st_mode)), path: destinationPath)
        try DirectoryFD.fsync(destinationFD, path: destinationPath)
        return findings.count == before ? digest : nil
    }

    /// Copies every entry of the directory `source` into the directory `destination`.
    mutating func copyContents(
        of source: Int32, into destination: Int32, at location: Location,
        digest: inout ContentDigest, depth: Int, destinationPath: String
    ) throws {
        let remaining = InstallLimits.maximumEntries - entries
        let listed: [EntryName]?
        do {
            listed = try DirectoryFD.names(in: source, path: location.source, limit: remaining)
        } catch let RegistryError.system(_, _, code) {
            refuse("install.unreadable", location, "cannot list this directory: \(failure(code))")
            return
        }
        guard let names = listed else {
            refuse("install.too-many-entries", location, "the source holds more than \(InstallLimits.maximumEntries) entries")
            exhausted = true
            return
        }
        for name in names {
            if exhausted { return }
            try copyEntry(
                name, from: source, to: name, in: destination, at: location,
                digest: &digest, depth: depth, destinationPath: destinationPath)
        }
    }

    /// Copies the entry `name` of directory `source` to `destinationName` in `destination`.
    /// `parent` locates `source`. Returns false when there is no such entry.
    @discardableResult
    mutating func copyEntry(
        _ name: EntryName, from source: Int32, to destinationName: EntryName, in destination: Int32,
        at parent: Location, digest: inout ContentDigest, depth: Int,
        destinationPath: String
    ) throws -> Bool {
        guard let nameString = name.string else {
            refuse("install.file-name", parent.appending(name.display), "the name is not valid UTF-8")
            return true
        }
        let location = parent.appending(nameString)
        entries += 1
        if entries > InstallLimits.maximumEntries {
            refuse("install.too-many-entries", location, "the source holds more than \(InstallLimits.maximumEntries) entries")
            exhausted = true
            return true
        }
        var st = stat()
        if try self.source({ name.withCString { fstatat(source, $0, &st, AT_SYMLINK_NOFOLLOW) } }) != 0 {
            if errno == ENOENT { return false }
            refuse("install.unreadable", location, "cannot stat: \(failure(errno))")
            return true
        }
        let destinationEntry = destinationPath + "/" + destinationName.display
        switch st.st_mode & S_IFMT {
        case S_IFDIR:
            if depth >= InstallLimits.maximumDepth {
                refuse("install.too-deep", location, "directories nest deeper than \(InstallLimits.maximumDepth) levels")
                return true
            }
            let sourceFD: Int32
            do {
                sourceFD = try self.source { try DirectoryFD.open(name, in: source, path: location.source) }
            } catch let RegistryError.system(_, _, code) {
                refuse(
                    code == ELOOP || code == ENOTDIR ? "install.changed" : "install.unreadable", location,
                    code == ELOOP || code == ENOTDIR
                        ? "changed while it was being copied"
                        : "cannot open: \(failure(code))")
                return true
            }
            defer { DirectoryFD.close(sourceFD) }
            digest.update(byte: UInt8(ascii: "d"))
            digest.update(location.bundle)
            // Written into as 0700, given its own mode once full.
            let destinationFD = try DirectoryFD.make(destinationName, in: destination, mode: 0o700, path: destinationEntry)
            defer { DirectoryFD.close(destinationFD) }
            try copyContents(
                of: sourceFD, into: destinationFD, at: location, digest: &digest,
                depth: depth + 1, destinationPath: destinationEntry)
            try DirectoryFD.own(destinationFD, mode: Self.copiedMode(Self.mode(of: sourceFD, else: st.st_mode)), path: destinationEntry)
            try DirectoryFD.fsync(destinationFD, path: destinationEntry)
        case S_IFREG:
            try copyFile(
                name, from: source, stat: st, to: destinationName, in: destination, at: location,
                digest: &digest, destinationPath: destinationEntry)
        case S_IFLNK:
            refuse(
                "install.symlink", location,
                "is a symbolic link\(((try? self.source { linkTarget(name, in: source) }) ?? nil).map { " to \"\($0)\"" } ?? ""); bundles are copied without links: put the file itself there"
            )
        default:
            refuse(
                "install.special-file", location,
                "is a \(Self.kindName(st.st_mode)); a bundle holds only regular files and directories")
        }
        return true
    }

    private mutating func copyFile(
        _ name: EntryName, from source: Int32, stat expected: stat, to destinationName: EntryName,
        in destination: Int32, at location: Location, digest: inout ContentDigest,
        destinationPath: String
    ) throws {
        let sourceFD = try self.source {
            name.withCString { openat(source, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
        }
        if sourceFD < 0 {
            let code = errno
            refuse(
                code == ELOOP ? "install.changed" : "install.unreadable", location,
                code == ELOOP ? "changed while it was being copied" : "cannot open: \(failure(code))")
            return
        }
        defer { DirectoryFD.close(sourceFD) }
        var st = stat()
        if fstat(sourceFD, &st) != 0 || (st.st_mode & S_IFMT) != S_IFREG
            || st.st_dev != expected.st_dev || st.st_ino != expected.st_ino
        {
            refuse("install.changed", location, "changed while it was being copied")
            return
        }
        if st.st_nlink > 1 {
            refuse(
                "install.hard-link", location, "has \(st.st_nlink) hard links; a bundle's files must be its own (copy the file instead of linking it)"
            )
            return
        }
        let size = Int64(st.st_size)
        totalBytes += size
        if totalBytes > InstallLimits.maximumTotalBytes {
            refuse("install.too-large", location, "the source holds more than \(InstallLimits.maximumTotalBytes) bytes")
            exhausted = true
            return
        }
        if !findings.isEmpty { return }  // refused already: look, do not copy

        let executable = (st.st_mode & 0o111) != 0
        let mode = Self.copiedMode(st.st_mode)
        digest.update(byte: UInt8(ascii: "f"))
        digest.update(location.bundle)
        digest.update(byte: executable ? 1 : 0)
        digest.update(UInt64(size))

        let out = destinationName.withCString { openat(destination, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        if out < 0 { throw DirectoryFD.fail("create", destinationPath) }
        defer { DirectoryFD.close(out) }

        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var copied: Int64 = 0
        while true {
            // Read one byte past the size seen at open: a file that grows is caught, not followed.
            let want = Int(min(Int64(buffer.count), size - copied + 1))
            let n = buffer.withUnsafeMutableBytes { Glibc.read(sourceFD, $0.baseAddress, want) }
            if n < 0 {
                if errno == EINTR { continue }
                refuse("install.unreadable", location, "cannot read: \(failure(errno))")
                return
            }
            if n == 0 { break }
            copied += Int64(n)
            if copied > size { break }
            try buffer.withUnsafeBytes { raw in
                let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                digest.update(chunk)
                try Self.writeAll(out, chunk, path: destinationPath)
            }
        }
        if copied != size {
            refuse("install.changed", location, "changed size while it was being copied")
            return
        }
        try DirectoryFD.own(out, mode: mode, path: destinationPath)
        try DirectoryFD.fsync(out, path: destinationPath)
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw DirectoryFD.fail("write", path)
            }
            offset += n
        }
    }

    private func linkTarget(_ name: EntryName, in dir: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = name.withCString { readlinkat(dir, $0, &buffer, buffer.count - 1) }
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "FIFO"
        case S_IFSOCK: "socket"
        case S_IFCHR: "character device"
        case S_IFBLK: "block device"
        default: "file of unknown type"
        }
    }
}
