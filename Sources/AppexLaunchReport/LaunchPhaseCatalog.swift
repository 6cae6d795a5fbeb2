/// The launch phases the supervisor records (in a request's outcome and in the launch
/// history), in the order they happen, with what each covers, and the one phase derived from
/// them: `startup`, the extension's own start-up, `checkIn − spawn`. Docs/profiling.md has
/// the same table.
package enum LaunchPhaseCatalog {
    enum Share: String {
        /// appexd and the kernel building and entering the sandbox.
        case sandbox
        /// The extension's process from exec to its Hello.
        case `extension`
        /// Decision → check-in: what the launch deadline bounds.
        case launch
        /// The request once the instance is there.
        case request
    }

    struct Phase {
        let name: String
        let share: Share
        let meaning: String
    }

    static let phases: [Phase] = [
        Phase(name: "handOff", share: .sandbox, meaning: "decision → the slot's launch worker starts on it"),
        Phase(name: "view", share: .sandbox, meaning: "building the extension's sandbox (first launch only)"),
        Phase(name: "prepare", share: .sandbox, meaning: "container, uid, cgroup, seccomp program, log"),
        Phase(name: "clone", share: .sandbox, meaning: "clone → first instruction of the child"),
        Phase(name: "sandbox", share: .sandbox, meaning: "child: namespaces, cgroup, view, limits, seccomp"),
        Phase(name: "exec", share: .sandbox, meaning: "execve → the new image runs"),
        Phase(name: "spawn", share: .sandbox, meaning: "decision → the extension's image runs (all of the above)"),
        Phase(name: "startup", share: .extension, meaning: "exec → Hello: loader, runtime, the extension's init"),
        Phase(name: "checkIn", share: .launch, meaning: "decision → Hello (spawn + startup), against the deadline"),
        Phase(name: "queue", share: .request, meaning: "waiting for an instance (only when over 1 ms)"),
        Phase(name: "roundTrip", share: .request, meaning: "BeginRequest sent → answer received (first request)"),
        Phase(name: "total", share: .request, meaning: "request received → outcome sent"),
    ]

    static func phase(_ name: String) -> Phase? { phases.first { $0.name == name } }

    /// Known phases in their order, then any others by name (a newer supervisor's).
    static func ordered<S: Sequence>(_ names: S) -> [String] where S.Element == String {
        let present = Set(names)
        let known = phases.map(\.name).filter { present.contains($0) }
        return known + present.subtracting(known).sorted()
    }

    /// `phases` with `startup` added when both its ends are there.
    package static func withDerived(_ phases: [String: UInt64]) -> [String: UInt64] {
        var out = phases
        if let checkIn = phases["checkIn"], let spawn = phases["spawn"] {
            out["startup"] = checkIn >= spawn ? checkIn - spawn : 0
        }
        return out
    }
}
