/// The memory Appex reports for an extension and judges it by, computed from `memory.stat`.
///
/// Like Apple's `phys_footprint`, it counts what the extension alone keeps resident and
/// the kernel cannot drop without killing it: anonymous memory, shared memory (tmpfs,
/// memfd, SysV shm), and dirty or under-writeback file pages. Clean page cache, including
/// the mapped text of libswiftCore and libc, is left out: the cgroup is charged for it, but
/// the kernel reclaims it before it OOM-kills (see Docs/cgroups.md, "Footprint").
public struct Footprint: Sendable, Equatable, CustomStringConvertible {
    public var anon: Int64
    public var shmem: Int64
    public var dirty: Int64
    public var writeback: Int64
    /// Clean file pages the cgroup is charged for (page cache, mapped libraries): reclaimable.
    public var cleanFile: Int64

    /// The footprint: anon + shmem + dirty + writeback.
    public var total: Int64 { anon + shmem + dirty + writeback }

    public init(anon: Int64, shmem: Int64, dirty: Int64, writeback: Int64, cleanFile: Int64) {
        self.anon = anon
        self.shmem = shmem
        self.dirty = dirty
        self.writeback = writeback
        self.cleanFile = cleanFile
    }

    /// Computes the footprint from a parsed `memory.stat` of either version.
    ///
    /// v1 keys: `rss` (anon, THP included), `shmem`, `dirty`, `writeback`, `cache` (all file
    /// pages including shmem). v2 keys: `anon`, `shmem`, `file_dirty`, `file_writeback`, `file`
    /// (which also includes shmem).
    public init(stat: [String: Int64], version: CgroupVersion) {
        switch version {
        case .v1:
            anon = stat["rss", default: 0]
            shmem = stat["shmem", default: 0]
            dirty = stat["dirty", default: 0]
            writeback = stat["writeback", default: 0]
            let file = stat["cache", default: 0]
            cleanFile = max(0, file - shmem - dirty - writeback)
        case .v2:
            anon = stat["anon", default: 0]
            shmem = stat["shmem", default: 0]
            dirty = stat["file_dirty", default: 0]
            writeback = stat["file_writeback", default: 0]
            let file = stat["file", default: 0]
            cleanFile = max(0, file - shmem - dirty - writeback)
        }
    }

    public var description: String {
        "footprint=\(total) (anon=\(anon) shmem=\(shmem) dirty=\(dirty) writeback=\(writeback)) cleanFile=\(cleanFile)"
    }
}
