/// A syscall group file (`Policies/syscall-groups/*.yaml`), read with the YAML loader.
extension SyscallGroup {
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
