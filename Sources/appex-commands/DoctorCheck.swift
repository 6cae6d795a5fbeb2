import AppexCommandSupport

/// One line of `appex doctor`: what was looked at, what was found, and what to do about it.
struct DoctorCheck {
    enum Status: String {
        /// Fine.
        case ok
        /// Appex runs, but something is missing or unwise.
        case warning
        /// Appex cannot run as it should until this is fixed.
        case failed
    }

    /// Short, stable name (`root`, `cgroups`, `seccomp-kernel`, …), the key in `--json`.
    var name: String
    var status: Status
    /// What was found.
    var detail: String
    /// The command or change that fixes it; nil when nothing needs doing.
    var fix: String?

    static func ok(_ name: String, _ detail: String) -> DoctorCheck {
        DoctorCheck(name: name, status: .ok, detail: detail, fix: nil)
    }

    static func warning(_ name: String, _ detail: String, fix: String) -> DoctorCheck {
        DoctorCheck(name: name, status: .warning, detail: detail, fix: fix)
    }

    static func failed(_ name: String, _ detail: String, fix: String) -> DoctorCheck {
        DoctorCheck(name: name, status: .failed, detail: detail, fix: fix)
    }

    /// `[ok] name: detail`, with `; fix: …` when there is one.
    var line: String {
        let mark =
            switch status {
            case .ok: "[ok]  "
            case .warning: "[warn]"
            case .failed: "[FAIL]"
            }
        return "\(mark) \(name): \(detail)" + (fix.map { "; fix: \($0)" } ?? "")
    }

    var json: [String: Any] {
        ["name": name, "status": status.rawValue, "detail": detail, "fix": fix.jsonOrNull]
    }
}
