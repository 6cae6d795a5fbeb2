import AppexTransferPlan

#if canImport(Glibc)
import Glibc
#endif

/// Lines to appexd on descriptor 4 (WorkerReport). A write that fails means appexd is gone;
/// the transfer goes on, and the next appexd resumes it from the partial file.
struct Reporter: Sendable {
    static let descriptor: Int32 = 4

    func send(_ report: WorkerReport) {
        var bytes = Array(report.line.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(Self.descriptor, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }
}
