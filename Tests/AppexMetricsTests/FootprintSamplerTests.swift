import AppexCgroups
import AppexMetrics
import AppexSupervisor
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The scrape's footprints come from the sampler: a scrape reads only instances it has never
/// seen, a refresh reads them all again, and an instance that is gone is forgotten. On the
/// real v1 kernel, with memory really charged (shmem written from inside the cgroup).
@Suite(.serialized)
struct FootprintSamplerTests {
    static let mib: Int64 = 1 << 20

    /// Runs `script` under /bin/sh inside the cgroup (it joins through `tasks` first) and waits.
    static func runInside(_ cgroup: ExtensionCgroup, _ script: String) throws {
        let tasks = cgroup.paths.map { $0 + "/tasks" }
        let join = tasks.map { "echo $$ > \($0)" }.joined(separator: "; ")
        var pid: pid_t = 0
        let argv = ["/bin/sh", "-c", join + "; " + script]
        var cargs = argv.map { strdup($0) } + [nil]
        defer { cargs.forEach { free($0) } }
        let rc = posix_spawn(&pid, "/bin/sh", nil, nil, &cargs, environ)
        try #require(rc == 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        try #require(status == 0, "script failed: \(script)")
    }

    @Test(.requiresRoot("needs root for cgroups")) func scrapesReadOnlyNewInstancesAndRefreshesReadThemAll() throws {
        let manager = try CgroupManager.detect(parentName: "appex-sampler-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try #require(manager.version == .v1, "this machine kind's memory controller is on cgroup v1")
        let shm = "/dev/shm/appex-sampler-test-\(getpid())"
        defer {
            unlink(shm)
            _ = try? manager.cleanupLeftovers()
            try? manager.removeParent()
        }
        let cgroup = try manager.create(name: "ext", limits: CgroupLimits(memoryMax: 64 * Self.mib))
        let instance = MetricsSnapshot.Instance(bundleIdentifier: "dev.appex.tests.sampler", band: "idle", cgroup: cgroup)
        let snapshot = MetricsSnapshot(extensions: [], instances: [instance], pressureLevel: .normal)
        let sampler = FootprintSampler(interval: .seconds(3600))

        #expect(sampler.refresh(snapshot, onlyNew: true) == 1, "a new instance is read at once")
        let first = try #require(sampler.reading(cgroup))
        #expect(first.footprint < 4 * Self.mib)

        // 8 MiB of shmem charged to the cgroup: part of the footprint (Docs/cgroups.md).
        try Self.runInside(cgroup, "head -c \(8 * Self.mib) /dev/zero > \(shm)")
        #expect(sampler.refresh(snapshot, onlyNew: true) == 0, "a scrape reads no instance it has seen")
        #expect(sampler.reading(cgroup)?.footprint == first.footprint)

        #expect(sampler.refresh(snapshot) == 1)
        let grown = try #require(sampler.reading(cgroup))
        #expect(grown.footprint >= 8 * Self.mib, "\(grown)")
        #expect(grown.peak >= 8 * Self.mib, "\(grown)")
        #expect(grown.charged >= grown.footprint)

        // Freed: the next refresh sees the charge move and reads the footprint again.
        unlink(shm)
        sampler.refresh(snapshot)
        #expect(try #require(sampler.reading(cgroup)).footprint < 4 * Self.mib)
        #expect(try #require(sampler.reading(cgroup)).peak >= 8 * Self.mib, "the high-water mark stays")

        // Gone from the snapshot: forgotten.
        sampler.refresh(MetricsSnapshot(extensions: [], instances: [], pressureLevel: .normal))
        #expect(sampler.reading(cgroup) == nil)
        #expect(sampler.all.isEmpty)
    }
}
