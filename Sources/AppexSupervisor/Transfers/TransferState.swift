import AppexCgroups
import AppexRegistry
import AppexWire

/// The supervisor's background transfers (Docs/transfers.md). Loop thread only.
final class TransferState: @unchecked Sendable {
    /// A transfer whose worker runs.
    final class Running: @unchecked Sendable {
        var record: TransferRecord
        let pid: Int32
        let reports: Int32
        var buffer: [UInt8] = []
        var final: WorkerReportLine?
        /// The bytes last written to the registry while it runs.
        var savedBytes: Int64 = 0
        var timer: EventLoop.TimerID?
        /// Why appexd ended it (cancel, time limit), which wins over what the worker said.
        var endedBy: (Reason, String)?
        /// Its own cgroup beneath appexd's parent (TransferWorkerLimits), removed once reaped.
        let cgroup: ExtensionCgroup

        init(record: TransferRecord, pid: Int32, reports: Int32, cgroup: ExtensionCgroup) {
            self.record = record
            self.pid = pid
            self.reports = reports
            self.cgroup = cgroup
        }
    }

    /// Who holds a session: the instance that scheduled into it, while it lives.
    struct Holder {
        weak var instance: ExtensionInstance?
    }

    /// Waiting for a worker, oldest first.
    var waiting: [TransferRecord] = []
    var running: [Int64: Running] = [:]
    /// "bundle\0session" → its holder.
    var holders: [String: Holder] = [:]
    /// Transfers being stored (checked, not yet in `waiting`), per extension.
    var reserved: [String: Int] = [:]
    /// Sessions whose events are on their way to the extension.
    var delivering: Set<String> = []
    /// The ids the supervisor gives its own event requests (never a host's).
    var nextEventRequestID: UInt64 = 1

    static func key(_ bundle: String, _ session: String) -> String { bundle + "\0" + session }

    func unfinished(of bundle: String) -> Int {
        waiting.count { $0.bundleIdentifier == bundle } + running.values.count { $0.record.bundleIdentifier == bundle }
    }

    /// The extensions with transfers not over in a session of that name.
    func unfinishedBundles(inSession session: String) -> Set<String> {
        Set(
            waiting.filter { $0.sessionIdentifier == session }.map(\.bundleIdentifier)
                + running.values.filter { $0.record.sessionIdentifier == session }.map(\.record.bundleIdentifier))
    }

    func runningCount(of bundle: String) -> Int {
        running.values.count { $0.record.bundleIdentifier == bundle }
    }
}

/// The worker's last line, parsed (AppexTransferPlan.WorkerReport.done).
struct WorkerReportLine {
    var completed: Bool
    var bytes: Int64
    var httpStatus: Int
    var reason: String?
    var message: String
}
