import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Page-cache charging helpers.
///
/// A memory cgroup is charged for a page-cache page by whoever first reads it in, and the
/// charge stays there (even after that cgroup is removed, until the page is reclaimed).
/// If an extension is the first to fault in the Swift runtime or Foundation, its cgroup
/// carries 10–60 MiB of clean library pages, and a small hard limit then makes it evict
/// and re-read its own code (measured in Docs/cgroups.md: a Foundation extension under
/// 16 MiB ran ~1000× slower). Reading the shared libraries once from the supervisor
/// charges them to the supervisor instead, so extensions pay only their footprint.
public enum PageCache {
    /// Reads every file so its pages are cached and charged to the calling process's
    /// cgroup. Returns the bytes read. Missing files are skipped: a runtime may lack some.
    @discardableResult
    public static func warm(_ paths: [String]) throws -> Int64 {
        var total: Int64 = 0
        var buf = [UInt8](repeating: 0, count: 1 << 20)
        for path in paths {
            let fd: Int32
            do {
                fd = try Sys.open(path, O_RDONLY)
            } catch let e as CgroupError where e.errno == .noSuchFileOrDirectory {
                continue
            }
            defer { Sys.close(fd) }
            while true {
                let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if Glibc.errno == EINTR { continue }
                    throw Sys.fail("read", path)
                }
                if n == 0 { break }
                total += Int64(n)
            }
        }
        return total
    }

    /// The shared objects in `directory` (e.g. the Swift runtime's `usr/lib/swift/linux`).
    public static func sharedObjects(in directory: String) throws -> [String] {
        guard let dir = opendir(directory) else { throw Sys.fail("opendir", directory) }
        defer { closedir(dir) }
        var out: [String] = []
        while let ent = readdir(dir) {
            let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasSuffix(".so") || name.contains(".so.") { out.append(directory + "/" + name) }
        }
        return out.sorted()
    }

    /// Drops the clean, unmapped cached pages of `path` (after flushing dirty ones), so the
    /// next reader is charged for them. For tests and measurements.
    public static func evict(_ path: String) throws {
        let fd = try Sys.open(path, O_RDONLY)
        defer { Sys.close(fd) }
        _ = fdatasync(fd)
        let r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        if r != 0 { throw CgroupError("posix_fadvise DONTNEED", path: path, errno: .init(rawValue: r)) }
    }
}

extension CgroupLimits {
    /// Room for clean page cache (the mapped text of the libraries an extension uses) on top
    /// of the footprint: enough for a Foundation extension whose runtime pages are charged to
    /// it to run near its unlimited speed (Docs/cgroups.md has the measurement).
    public static let defaultFileAllowance: Int64 = 32 << 20

    /// Kernel limits for a footprint budget.
    ///
    /// The kernel limits charged memory, which includes clean page cache, and it never
    /// OOM-kills while it can still evict a file page; a hard limit at the footprint budget
    /// therefore thrashes (re-reading code) instead of killing. So the hard limit is
    /// `footprint + fileAllowance` and the footprint budget itself is enforced by Appex from
    /// `memory.stat` (`ExtensionCgroup.footprint()`), woken by a usage threshold at `footprint`.
    /// The soft limit likewise gets the allowance added.
    public static func forFootprint(
        _ footprint: Int64, warnAt: Int64? = nil,
        fileAllowance: Int64 = defaultFileAllowance,
        pidsMax: Int? = nil, swapOff: Bool = true
    ) -> CgroupLimits {
        CgroupLimits(
            memoryMax: footprint + fileAllowance,
            memoryHigh: warnAt.map { $0 + fileAllowance },
            pidsMax: pidsMax, swapOff: swapOff)
    }
}
