/// A named set of system calls that policies deny together, from `Policies/syscall-groups/`.
public struct SyscallGroup: Sendable, Hashable {
    public var name: String
    public var summary: String
    /// The Apple APIs or capabilities this group stands in for, for people reading a denial.
    public var appleCounterpart: String?
    public var syscalls: [String]
    public var file: String

    static let keys: Set<String> = ["name", "summary", "appleCounterpart", "syscalls"]

    static func parse(_ text: String, file: String) throws -> SyscallGroup {
        let root = try YAMLNode.parse(text, file: file)
        var name: String?
        var summary = ""
        var counterpart: String?
        var syscalls: [String] = []
        var errors: [PolicyError] = []
        for (key, node) in try root.mapping(allowed: keys) {
            switch key {
            case "name": name = try node.string()
            case "summary": summary = try node.string()
            case "appleCounterpart": counterpart = try node.string()
            case "syscalls":
                for entry in try node.sequence() {
                    let call = try entry.string()
                    if SyscallNames.isKnown(call) {
                        syscalls.append(call)
                    } else {
                        errors.append(entry.error("unknown system call \"\(call)\""))
                    }
                }
            default: break
            }
        }
        if !errors.isEmpty { throw PolicyErrors(errors: errors) }
        guard let name else { throw root.error("missing required key \"name\"") }
        guard !syscalls.isEmpty else { throw root.error("group \"\(name)\" lists no syscalls") }
        return SyscallGroup(name: name, summary: summary, appleCounterpart: counterpart, syscalls: syscalls, file: file)
    }
}
