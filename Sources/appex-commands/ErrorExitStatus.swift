import AppexActivation
import AppexBundle
import AppexHostClient
import AppexPolicy
import AppexRegistry
import AppexRun
import AppexSandbox
import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// Which line of the exit-status table (ExitStatus) an error a command throws stands for;
/// nil: argument-parser's own (a usage error 64, an ExitCode as it is).
enum ErrorExitStatus {
    static func of(_ error: Error) -> ExitStatus? {
        switch error {
        case let e as CommandFailure: return e.status
        case let e as HostClientError: return e.exitStatus
        case is PolicyError, is PolicyErrors: return .configuration
        case let e as PropertyListFileError:
            if case .unreadable(let path, _) = e, access(path, F_OK) != 0 { return .noInput }
            return .dataError
        case is PropertyListSyntaxError, is RuleError, is ItemsError, is UnsafeIdentifierError: return .dataError
        case let e as RegistryError:
            switch e {
            case .unknownExtension: return .noInput
            case .invalidBundle, .unusableSource: return .dataError
            case .system, .database, .containerRemoval, .dataLeftBehind: return .osError
            case .ownedByAnotherApp, .appGroupRefused: return .no
            }
        case is SandboxError, is LaunchError: return .osError
        default: return nil
        }
    }
}
