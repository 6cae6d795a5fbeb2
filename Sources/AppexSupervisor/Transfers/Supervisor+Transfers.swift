import AppexCgroups
import AppexPolicy
import AppexRegistry
import AppexSandbox
import AppexStateDirectory
import AppexTransferPlan
import AppexWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Background transfers (Docs/transfers.md): an extension's ScheduleTransfer is checked against
// its policy, stored in the registry and carried out by an `appex-transfer` worker running as
// the extension's uid; when every transfer of a session is over, the extension (or a host of
// its containing app) gets the session's results. Registry writes go through `historyQueue`,
// in order, never on the loop.

extension Supervisor {
    /// Loop only. An extension asks for a transfer during request `m.requestID`.
    func scheduleTransfer(_ m: ScheduleTransfer, from instance: ExtensionInstance) {
        loop.assertOnLoop()
        guard let entry = catalog[instance.identifier] else {
            return refuseTransfer(m, instance, .unknownExtension, "\(instance.identifier) is not installed")
        }
        let limits = entry.lifecycle.transfers
        guard limits.allowed else {
            return refuseTransfer(
                m, instance, .transfersNotAllowed, "extension point \(entry.installed.extensionPoint) does not allow background transfers")
        }
        guard entry.policy.hostNetwork else {
            return refuseTransfer(
                m, instance, .noNetwork, "the extension has no network (its policy's `network`, or the network entitlement), so nor do its transfers")
        }
        if let problem = TransferRequestCheck.problem(m, appGroups: entry.policy.appGroups) {
            return refuseTransfer(m, instance, .invalidTransfer, problem)
        }
        // Session identifiers are the containing app's, as on Apple platforms: one process at a
        // time, and one extension's transfers at a time, per identifier.
        let app = entry.installed.containingAppIdentifier ?? instance.identifier
        let key = TransferState.key(app, m.sessionIdentifier)
        if let holder = transfers.holders[key]?.instance, holder !== instance, holder.isLive {
            return refuseTransfer(m, instance, .sessionBusy, "session \(m.sessionIdentifier) is in use by \(holder.label); one process per session")
        }
        if let other = transfers.unfinishedBundles(inSession: m.sessionIdentifier).first(where: {
            $0 != instance.identifier && (catalog[$0]?.installed.containingAppIdentifier ?? $0) == app
        }) {
            return refuseTransfer(m, instance, .sessionBusy, "session \(m.sessionIdentifier) has transfers of \(other) that are not over")
        }
        let unfinished = transfers.unfinished(of: instance.identifier) + transfers.reserved[instance.identifier, default: 0]
        guard unfinished < limits.pending else {
            return refuseTransfer(
                m, instance, .transferLimit, "\(unfinished) transfers of \(instance.identifier) are not over yet, at most \(limits.pending)")
        }
        transfers.holders[key] = TransferState.Holder(instance: instance)
        transfers.reserved[instance.identifier, default: 0] += 1
        let t = m.transfer
        let record = TransferRecord(
            bundleIdentifier: instance.identifier, sessionIdentifier: m.sessionIdentifier,
            kind: t.kind.name, url: t.url, method: t.method ?? (t.kind == .download ? "GET" : "PUT"),
            headers: t.headers, appGroup: t.appGroup, fileName: t.fileName)
        let registry = self.registry
        let window = Date().addingTimeInterval(-Double(TransferPolicy.quotaWindow.components.seconds))
        historyQueue.async { [self] in
            let stored: Result<TransferRecord, Error>
            let used = (try? registry.transferBytes(bundleIdentifier: record.bundleIdentifier, since: window)) ?? 0
            if used >= limits.quotaBytes {
                stored = .failure(TransferQuotaReached(used: used, quota: limits.quotaBytes))
            } else {
                stored = Result { try registry.addTransfer(record) }
            }
            loop.post { [self] in
                transfers.reserved[record.bundleIdentifier, default: 1] -= 1
                switch stored {
                case .success(let row):
                    logger.info("\(instance.label): transfer \(row.id!) scheduled: \(row.kind) \(row.url) in session \(row.sessionIdentifier)")
                    if instance.isLive {
                        send(.transferScheduled(TransferScheduled(requestID: m.requestID, token: m.token, transferID: UInt64(row.id!))), to: instance)
                    }
                    transfers.waiting.append(row)
                    startWaitingTransfers()
                case .failure(let q as TransferQuotaReached):
                    refuseTransfer(m, instance, .transferQuota, "\(q.used) of \(q.quota) bytes moved in the last day")
                case .failure(let error):
                    refuseTransfer(m, instance, .busy, "the registry refused the transfer: \(error)")
                }
            }
        }
    }

    private func refuseTransfer(_ m: ScheduleTransfer, _ instance: ExtensionInstance, _ reason: Reason, _ message: String) {
        logger.info("\(instance.label): transfer refused: \(reason) \(message)")
        metrics.transfer(outcome: "refused-" + reason.rawValue)
        send(.transferScheduled(TransferScheduled(requestID: m.requestID, token: m.token, reason: reason, message: message)), to: instance)
    }

    /// Loop only. At start: what a predecessor left running or waiting starts again (a partial
    /// download resumes where its file ends), and sessions that ended without their events
    /// being delivered get them.
    func resumeTransfers() {
        loop.assertOnLoop()
        let registry = self.registry
        historyQueue.async { [self] in
            let unfinished = (try? registry.unfinishedTransfers()) ?? []
            let owed = (try? registry.sessionsOwingEvents()) ?? []
            loop.post { [self] in
                if !unfinished.isEmpty { logger.info("transfers: resuming \(unfinished.count)") }
                transfers.waiting += unfinished
                startWaitingTransfers()
                for (bundle, session) in owed { sessionMayBeOver(bundle: bundle, session: session) }
            }
        }
    }

    /// Loop only. Starts workers for waiting transfers, up to each extension's `concurrent`.
    func startWaitingTransfers() {
        loop.assertOnLoop()
        guard !shuttingDown else { return }
        var i = 0
        while i < transfers.waiting.count {
            let record = transfers.waiting[i]
            let concurrent = catalog[record.bundleIdentifier]?.lifecycle.transfers.concurrent ?? 1
            if transfers.runningCount(of: record.bundleIdentifier) < concurrent {
                transfers.waiting.remove(at: i)
                startTransfer(record)
            } else {
                i += 1
            }
        }
    }

    private func startTransfer(_ original: TransferRecord) {
        var record = original
        guard let entry = catalog[record.bundleIdentifier] else {
            return endTransfer(record, state: .failed, reason: .unknownExtension, message: "\(record.bundleIdentifier) is no longer installed")
        }
        let limits = entry.lifecycle.transfers
        guard entry.policy.hostNetwork, limits.allowed, entry.policy.appGroups.contains(record.appGroup) else {
            return endTransfer(
                record, state: .failed, reason: .transfersNotAllowed,
                message: "the extension's policy no longer allows this transfer (network, transfers or app group)")
        }
        let elapsed = Date().timeIntervalSince(record.createdAt)
        let left = Double(limits.timeLimit.components.seconds) - elapsed
        guard left > 0 else {
            return endTransfer(record, state: .failed, reason: .transferTimeout, message: "the time limit of \(limits.timeLimit) passed")
        }
        // One read of the registry on the loop (SQLite in WAL mode: a reader never waits).
        let window = Date().addingTimeInterval(-Double(TransferPolicy.quotaWindow.components.seconds))
        let used = (try? registry.transferBytes(bundleIdentifier: record.bundleIdentifier, since: window)) ?? 0
        let quotaLeft = limits.quotaBytes - (used - record.bytes)
        guard quotaLeft > 0 else {
            return endTransfer(record, state: .failed, reason: .transferQuota, message: "the day's quota of \(limits.quotaBytes) bytes is used")
        }
        let plan = TransferPlan(
            kind: record.kind == "upload" ? .upload : .download, url: record.url, method: record.method,
            headers: record.headerLines, fileName: record.fileName, quotaBytes: quotaLeft,
            timeLimitSeconds: Int64(left.rounded(.up)), etag: record.etag)
        let worker: TransferWorkerProcess
        let cgroup: ExtensionCgroup
        do {
            let store = ContainerStore(stateRoot: options.stateDirectory, uidRange: options.uidRange)
            let uid = try store.uids.uid(for: record.bundleIdentifier)
            let group = try store.openGroupDirectory(record.appGroup)
            defer { _ = close(group.fd) }
            cgroup = try cgroups.create(name: TransferWorkerLimits.cgroupName(record.id!), limits: TransferWorkerLimits.cgroup)
            do {
                worker = try TransferWorkerProcess.spawn(plan: plan, directory: group.fd, uid: uid, gid: group.gid) { pid in
                    try cgroup.addProcess(pid)
                }
            } catch {
                try? cgroup.remove()
                throw error
            }
        } catch {
            return endTransfer(record, state: .failed, reason: .launchFailed, message: "cannot start the transfer worker: \(error)")
        }
        record.state = .running
        record.attempts += 1
        let running = TransferState.Running(record: record, pid: worker.pid, reports: worker.reports, cgroup: cgroup)
        transfers.running[record.id!] = running
        saveTransfer(record)
        logger.info("transfer \(record.id!): worker pid \(worker.pid) for \(record.bundleIdentifier), \(record.kind) \(record.url)")
        do {
            try loop.register(worker.reports) { [self] in transferReportsReadable(running) }
        } catch {
            Glibc.kill(worker.pid, SIGKILL)
            running.endedBy = (.launchFailed, "cannot watch the worker: \(error)")
            workerGone(running)
            return
        }
        running.timer = loop.schedule(after: .milliseconds(Int64(left * 1000))) { [self] in
            running.timer = nil
            stopWorker(running, .transferTimeout, "the time limit of \(limits.timeLimit) passed")
        }
    }

    private func transferReportsReadable(_ running: TransferState.Running) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { read(running.reports, $0.baseAddress, $0.count) }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
        if n <= 0 {
            workerGone(running)
            return
        }
        running.buffer += chunk[0..<n]
        // A worker's lines are short; one that never ends a line is cut off at 64 KiB.
        while let nl = running.buffer.firstIndex(of: 10) {
            let line = String(decoding: running.buffer[..<nl], as: UTF8.self)
            running.buffer.removeSubrange(...nl)
            switch WorkerReport(line: Substring(line)) {
            case .progress(let bytes)?:
                // Saved now and then, so `appex transfers` shows a running transfer's progress.
                running.record.bytes = bytes
                if bytes - running.savedBytes >= 1 << 20 {
                    running.savedBytes = bytes
                    saveTransfer(running.record)
                }
            case .resumable(let etag)?:
                running.record.etag = etag
                saveTransfer(running.record)
            case .done(let ok, let bytes, let status, let reason, let message)?:
                running.final = WorkerReportLine(completed: ok, bytes: bytes, httpStatus: status, reason: reason, message: message)
            case nil:
                logger.warning("transfer \(running.record.id!): worker said \(line)")
            }
        }
        if running.buffer.count > 65536 { running.buffer.removeAll() }
    }

    /// The worker closed its reports: it is exiting. Reaped off the loop, ended here.
    private func workerGone(_ running: TransferState.Running) {
        loop.unregister(running.reports)
        _ = close(running.reports)
        loop.cancel(running.timer)
        running.timer = nil
        let pid = running.pid
        workers.async { [self] in
            var waited: Int32 = 0
            while waitpid(pid, &waited, 0) < 0 && errno == EINTR {}
            let status = waited
            loop.post { [self] in workerReaped(running, status: status) }
        }
    }

    private func workerReaped(_ running: TransferState.Running, status: Int32) {
        transfers.running[running.record.id!] = nil
        let atItsLimit = ((try? running.cgroup.oomKillCount()) ?? 0) > 0
        do { try running.cgroup.remove() } catch { logger.warning("transfer \(running.record.id!): cannot remove its cgroup: \(error)") }
        var record = running.record
        if running.endedBy?.0 == .shutdown {
            // Still `running` in the registry: the next appexd resumes it.
            saveTransfer(record)
            return
        }
        if let (reason, message) = running.endedBy {
            if let f = running.final { record.bytes = f.bytes }
            // Killed (cancelled, out of time): its partial download goes; nothing resumes it.
            if record.kind == "download" { removePartialDownload(record) }
            endTransfer(record, state: reason == .cancelled ? .cancelled : .failed, reason: reason, message: message)
        } else if let f = running.final {
            record.bytes = f.bytes
            record.httpStatus = f.httpStatus == 0 ? nil : f.httpStatus
            endTransfer(record, state: f.completed ? .completed : .failed, reason: f.reason.map(Reason.init(rawValue:)), message: f.message)
        } else {
            let signal = status & 0x7f
            let how =
                atItsLimit
                ? "was killed at its memory limit (\(TransferWorkerLimits.memory / (1 << 20)) MiB)"
                : signal != 0 ? "was killed by signal \(signal)" : "exited with status \((status >> 8) & 0xff)"
            endTransfer(record, state: .failed, reason: .crashed, message: "the transfer worker \(how) without a result")
        }
        startWaitingTransfers()
    }

    /// Unlinks `.<name>.appex-partial` beneath the group directory (one component, no link
    /// followed: unlinkat never follows the last one).
    private func removePartialDownload(_ record: TransferRecord) {
        let store = ContainerStore(stateRoot: options.stateDirectory, uidRange: options.uidRange)
        guard TransferPlan.fileNameProblem(record.fileName) == nil, let group = try? store.openGroupDirectory(record.appGroup) else { return }
        _ = unlinkat(group.fd, TransferPlan.partialName(of: record.fileName), 0)
        _ = close(group.fd)
    }

    /// Loop only. Ends a running transfer's worker; `reason` is what the transfer ends with.
    func stopWorker(_ running: TransferState.Running, _ reason: Reason, _ message: String) {
        loop.assertOnLoop()
        guard running.endedBy == nil else { return }
        running.endedBy = (reason, message)
        // Not reaped until its reports end, so the pid is still this worker's.
        Glibc.kill(running.pid, SIGKILL)
    }

    func endTransfer(_ original: TransferRecord, state: TransferRecord.State, reason: Reason?, message: String) {
        var ended = original
        ended.state = state
        ended.reason = reason?.rawValue
        ended.message = message.isEmpty ? nil : message
        ended.endedAt = Date()
        let record = ended
        logger.info(
            "transfer \(record.id.map(String.init) ?? "?") \(state.rawValue)\(reason.map { " (\($0))" } ?? ""): \(record.bytes) bytes \(message)")
        metrics.transfer(outcome: state.rawValue, kind: record.kind, bytes: record.bytes)
        let registry = self.registry
        historyQueue.async { [self] in
            do { try registry.updateTransfer(record) } catch { logger.error("transfer \(record.id!): cannot record its end: \(error)") }
            loop.post { [self] in sessionMayBeOver(bundle: record.bundleIdentifier, session: record.sessionIdentifier) }
        }
    }

    func saveTransfer(_ record: TransferRecord) {
        let registry = self.registry
        historyQueue.async { [self] in
            do { try registry.updateTransfer(record) } catch { logger.error("transfer \(record.id!): cannot record it: \(error)") }
        }
    }

    /// Loop only, at shutdown: workers end with appexd; their transfers stay `running` in the
    /// registry and the next appexd resumes them. Their cgroups go now, as the loop may stop
    /// before the workers are reaped and the parent is removed only when empty.
    func stopTransferWorkers() {
        loop.assertOnLoop()
        for r in transfers.running.values {
            r.endedBy = (.shutdown, "appexd stopped")
            Glibc.kill(r.pid, SIGKILL)
        }
        for r in transfers.running.values {
            do {
                try r.cgroup.killAll()
                try r.cgroup.remove()
            } catch {
                logger.warning("transfer \(r.record.id!): cannot remove its cgroup: \(error)")
            }
        }
    }
}

struct TransferQuotaReached: Error {
    var used: Int64
    var quota: Int64
}
