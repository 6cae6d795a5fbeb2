/// A policy file that cannot be used, with the file, line, column and key that are wrong.
public struct PolicyError: Error, Sendable, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int?
    public var column: Int?
    /// Dotted path of the offending key, e.g. `memory.activeHardLimit` or `syscalls.deny[2].group`.
    public var key: String?
    public var message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, key: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message
    }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let column { location += ":\(column)" }
        if let key { return "\(location): \(key): \(message)" }
        return "\(location): \(message)"
    }
}

/// Every error found in a policy tree: checking goes on past the first one.
public struct PolicyErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [PolicyError]
    public var description: String { errors.map(\.description).joined(separator: "\n") }

    package init(errors: [PolicyError]) {
        self.errors = errors
    }
}
