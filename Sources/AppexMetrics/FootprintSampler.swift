import AppexCgroups
import AppexSupervisor
import NIOConcurrencyHelpers

/// The footprints and high-water marks of live instances, read in the background so that a
/// scrape reads no cgroup file (cAdvisor's housekeeping, in small): with 1,000 instances,
/// reading `memory.stat` and the peak of each on every scrape was most of the scrape
/// (Docs/decisions/0010-many-idle-extensions.md).
///
/// `refresh` (every `interval`, on the metrics thread) reads each instance's charge and peak
/// (one number each) and `memory.stat` (dearer: the kernel formats all of it) only when
/// the charge moved since the last reading: an idle extension costs two small reads per
/// interval. A scrape takes what is here, reading only instances it has never seen (launched
/// since the last refresh), so a gauge is at most `interval` old and a new instance shows at
/// once. Appex's own decisions never wait on this: the jetsam reads its cgroups itself.
public final class FootprintSampler: Sendable {
    public struct Reading: Sendable, Equatable {
        public var charged: Int64
        public var footprint: Int64
        public var peak: Int64
    }

    public static let defaultInterval: Duration = .seconds(10)

    public let interval: Duration
    /// By the cgroup's memory directory: an instance's identity for as long as it lives.
    private let readings = NIOLockedValueBox<[String: Reading]>([:])
    private let changes = NIOLockedValueBox<UInt64>(0)

    /// Changes whenever a reading does (or one comes or goes): equal numbers, equal readings.
    public var generation: UInt64 { changes.withLockedValue { $0 } }

    public init(interval: Duration = FootprintSampler.defaultInterval) {
        self.interval = interval
    }

    /// Reads the instances of `snapshot` (all of them, or with `onlyNew` those never read) and
    /// forgets those no longer in it. Returns how many readings it made.
    @discardableResult
    public func refresh(_ snapshot: MetricsSnapshot, onlyNew: Bool = false) -> Int {
        let known = readings.withLockedValue { $0 }
        if onlyNew {
            // A scrape: read what is new, keep the rest as it is (gone ones go at the next
            // full refresh; a scrape looks readings up by its own snapshot's instances).
            var new: [String: Reading] = [:]
            for instance in snapshot.instances {
                guard let cgroup = instance.cgroup, known[cgroup.memoryDir] == nil,
                    let reading = Self.read(cgroup, previous: nil)
                else { continue }
                new[cgroup.memoryDir] = reading
            }
            if !new.isEmpty {
                readings.withLockedValue { $0.merge(new) { _, fresh in fresh } }
                changes.withLockedValue { $0 &+= 1 }
            }
            return new.count
        }
        var fresh: [String: Reading] = [:]
        fresh.reserveCapacity(snapshot.instances.count)
        var read = 0
        for instance in snapshot.instances {
            guard let cgroup = instance.cgroup, let reading = Self.read(cgroup, previous: known[cgroup.memoryDir]) else { continue }
            fresh[cgroup.memoryDir] = reading
            read += 1
        }
        let changed = readings.withLockedValue { r -> Bool in
            defer { r = fresh }
            return r != fresh
        }
        if changed { changes.withLockedValue { $0 &+= 1 } }
        return read
    }

    /// One cgroup's reading: `memory.stat` only when the charge moved since `previous`. nil
    /// when the cgroup went away meanwhile (the instance ended).
    private static func read(_ cgroup: ExtensionCgroup, previous: Reading?) -> Reading? {
        guard let charged = try? cgroup.memoryCurrent() else { return nil }
        let peak = (try? cgroup.memoryPeak()) ?? max(charged, previous?.peak ?? 0)
        if let previous, previous.charged == charged {
            return Reading(charged: charged, footprint: previous.footprint, peak: peak)
        }
        guard let footprint = try? cgroup.footprint() else { return nil }
        return Reading(charged: charged, footprint: footprint, peak: peak)
    }

    /// The last reading of `cgroup`, if any.
    public func reading(_ cgroup: ExtensionCgroup) -> Reading? {
        readings.withLockedValue { $0[cgroup.memoryDir] }
    }

    /// Every reading, for a scrape to look up many at once under one lock.
    public var all: [String: Reading] { readings.withLockedValue { $0 } }
}
