import AppexPolicy
import AppexRun
import AppexSupervisor
import ArgumentParser

/// appexd's own failures, in the `appex` table's terms (sysexits, `ExitStatus`), so a service
/// manager can tell a mistake to fix from one to retry: the unit does not restart on
/// `configuration` (RestartPreventExitStatus=78, Docs/appexd.service).
enum DaemonExitStatus {
    static func status(for error: Error) -> ExitStatus {
        switch error {
        case is PolicyError, is PolicyErrors: .configuration
        case let e as SupervisorError where e.isInUse: .temporaryFailure
        default: .osError
        }
    }
}
