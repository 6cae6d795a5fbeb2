/// Whose permissions an install reads its source with: the user who asked for it, as the
/// kernel reported them for that user's connection (uid, gid and supplementary groups).
/// appexd runs as root and follows a path an administrator names; reading it with the
/// administrator's own identity means an install can copy only what that user could read.
public struct FileIdentity: Sendable, Hashable, CustomStringConvertible {
    public var uid: UInt32
    public var gid: UInt32
    public var groups: [UInt32]

    public init(uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    public var description: String { "uid \(uid)" }
}
