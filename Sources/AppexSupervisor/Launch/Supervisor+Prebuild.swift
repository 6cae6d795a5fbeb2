import AppexCgroups
import AppexSandbox
import Dispatch

// Sandboxes built ahead (SupervisorOptions.prebuildSandboxes). A first launch otherwise builds
// its extension's sandbox: new namespaces, ~15 mounts, a pivot_root and the exec of the init,
// 2–4 ms, and pivot_root grows with every process on the system (the kernel walks all tasks
// to move the ones whose root was the old one), so with 1,000 extensions running it is the one
// launch phase that still grows (Docs/metrics.md, "Benchmark"). Built ahead, in the
// background, the launch only enters it, like a later launch of an extension that ran before.
//
// What it costs: each enabled extension holds its sandbox (one sleeping init and its
// namespaces) before it ever runs, as one that has run holds it today. Disable, uninstall
// and shutdown close it as they always did; both run on the extension's launch queue, so a
// build queued before them is closed by them.

extension Supervisor {
    /// Queues the build of `entry`'s sandbox on its launch queue when the option is on and the
    /// extension is enabled; nothing when its sandbox is already there. A failure is logged
    /// and left to the first launch, which tries again and reports it to the host.
    func prebuildSandbox(_ entry: CatalogEntry) {
        guard options.prebuildSandboxes, !shuttingDown, entry.installed.isEnabled else { return }
        let slot = slot(for: entry.identifier)
        let holder = slot.sandbox, spec = entry.spec, runOptions = self.runOptions
        let identifier = entry.identifier
        slot.launchQueue.async { [self] in
            let t0 = MonotonicTime.now
            var built = false
            do {
                _ = try holder.current {
                    built = true
                    return try Self.buildSandbox(spec: spec, options: runOptions)
                }
            } catch {
                loop.post { [self] in
                    logger.warning("\(identifier): sandbox not built ahead (its first launch will try again): \(error)")
                }
                return
            }
            guard built else { return }
            let nanos = MonotonicTime.now - t0
            loop.post { [self] in metrics.sandboxBuilt(trigger: "prebuild", nanos: nanos) }
        }
    }

    /// The pid of `identifier`'s sandbox init when its sandbox is built and alive, once the
    /// work already queued for the extension (a launch, a prebuild, a close) is done; nil
    /// otherwise. For tests and tools that need to know whether a sandbox is ready.
    public func sandboxInitPID(of identifier: String) async -> Int32? {
        guard let (queue, holder) = await onLoop({ s in s.slots[identifier].map { ($0.launchQueue, $0.sandbox) } }) else {
            return nil
        }
        return await withCheckedContinuation { c in queue.async { c.resume(returning: holder.initPID) } }
    }
}
