/// A named set of system calls that policies deny together, from `Policies/syscall-groups/`.
public struct SyscallGroup: Sendable, Hashable {
    public var name: String
    public var summary: String
    /// The Apple APIs or capabilities this group stands in for, for people reading a denial.
    public var appleCounterpart: String?
    public var syscalls: [String]
    public var file: String

    package init(name: String, summary: String, appleCounterpart: String?, syscalls: [String], file: String) {
        self.name = name
        self.summary = summary
        self.appleCounterpart = appleCounterpart
        self.syscalls = syscalls
        self.file = file
    }
}
