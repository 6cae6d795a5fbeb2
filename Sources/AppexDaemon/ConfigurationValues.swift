import AppexPolicy

/// The checks of the configuration's values, each failing with the value's file, line and key.
enum ConfigurationValues {
    /// The largest uid: (uid_t)-1 means "no uid" to the kernel.
    static let maxUID = Int(UInt32.max) - 1

    /// A list of uids or user names (looked up in the password database now, so a name that
    /// does not exist is refused at start rather than never matching).
    static func uids(_ node: YAMLNode) throws -> Set<UInt32> {
        var uids = Set<UInt32>()
        for entry in try node.sequence() {
            let text = try entry.string()
            if let number = Int(text) {
                guard (0...maxUID).contains(number) else {
                    throw entry.error("uid \(number) is out of range 0…\(maxUID)")
                }
                uids.insert(UInt32(number))
            } else if text.isEmpty {
                throw entry.error("expected a uid or a user name, found nothing")
            } else {
                guard let uid = try UserDatabase.uid(ofUser: text, at: entry) else {
                    throw entry.error("no user named \"\(text)\" on this machine (expected a uid or a user name)")
                }
                uids.insert(uid)
            }
        }
        return uids
    }

    static func absolutePath(_ node: YAMLNode) throws -> String {
        let path = try node.string()
        guard path.hasPrefix("/") else { throw node.error("expected an absolute path, found \"\(path)\"") }
        guard !path.utf8.contains(0) else { throw node.error("a path cannot contain a NUL byte") }
        return path
    }

    /// sun_path holds 108 bytes with the terminating NUL.
    static func socketPath(_ node: YAMLNode) throws -> String {
        let path = try absolutePath(node)
        guard path.utf8.count <= 107 else {
            throw node.error("a socket path is at most 107 bytes, this one is \(path.utf8.count)")
        }
        return path
    }

    static func nonNegativeDuration(_ node: YAMLNode) throws -> Duration {
        let text = try node.string()
        if text.drop(while: { $0 == " " }).hasPrefix("-") {
            throw node.error("a duration cannot be negative, found \"\(text)\"")
        }
        return try node.duration()
    }

    static func metricsEndpoint(_ node: YAMLNode) throws -> MetricsEndpoint {
        let text = try node.string()
        guard let endpoint = MetricsEndpoint(parsing: text) else {
            throw node.error("\(MetricsEndpoint.expected), found \"\(text)\"")
        }
        return endpoint
    }

    static func positiveSize(_ node: YAMLNode) throws -> ByteSize {
        let size = try node.byteSize()
        guard size.bytes > 0 else { throw node.error("expected a size above 0, found \(size)") }
        return size
    }

    static func logLevel(_ node: YAMLNode) throws -> String {
        let text = try node.string()
        let levels = DaemonConfiguration.logLevels
        guard levels.contains(text) else {
            throw node.error("expected one of \(levels.joined(separator: ", ")), found \"\(text)\"")
        }
        return text
    }
}
