import AppexPolicyCore

/// The exit statuses of every `appex` command, after sysexits(3): one table, printed by
/// `appex --help` and kept equal to README.md's by a test (ExitStatusCLITests).
///
/// `appex run` is the exception bwrap and systemd-run users expect: once the extension ran,
/// its own status is appex's, and 128 + N when signal N killed it (a kill at its memory
/// limit is 137). Its own failures before the extension ran use this table.
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    case no = 1
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
    case osError = 71
    case cannotCreate = 73
    case temporaryFailure = 75
    case noPermission = 77
    case configuration = 78
    case cannotExecute = 126
    case notFound = 127

    public var meaning: String {
        switch self {
        case .success: "success: valid, completed, every check or case passed"
        case .no: "no: an invalid bundle, a request not completed, a failed test or check"
        case .usage: "the command line is wrong: an unknown option, a bad or missing value"
        case .dataError: "an input is malformed: plist, ELF file, activation rule, items, test file"
        case .noInput: "not found: a file, bundle, installed extension or extension point"
        case .unavailable: "appexd does not answer at its control socket"
        case .software: "appexd broke the protocol or dropped the connection (a bug: report it)"
        case .osError: "a system call failed: the sandbox or state could not be set up"
        case .cannotCreate: "an output file (--html, --junit) cannot be written"
        case .temporaryFailure: "appexd is busy or stopping: try again"
        case .noPermission: "not permitted: needs root, or an admin or host in appexd's configuration"
        case .configuration: "a policy or configuration file does not load"
        case .cannotExecute: "appex-commands (the rest of the tool) is there but cannot be run"
        case .notFound: "appex-commands is not installed beside appex"
        }
    }

    /// `appex run`'s status when signal `signal` ended the extension, as a shell reports it.
    public static func killed(by signal: Int32) -> Int32 { 128 + signal }

    /// The table as `--help` prints it.
    public static var table: String {
        var lines = allCases.map { s -> String in
            let code = String(s.rawValue)
            return String(repeating: " ", count: 3 - code.count) + code + "  " + s.meaning
        }
        lines.append("128+N  appex run: the extension was killed by signal N (137: SIGKILL);")
        lines.append("       otherwise appex run exits with the extension's own status")
        return lines.newlineJoined
    }
}
