#if canImport(Glibc)
import Glibc
#endif

extension ContainerStore {
    /// The app group's directory, made if missing and opened beneath the state root without
    /// following a link on the way (as a launch makes it), with the gid its members share: what
    /// appexd hands a background-transfer worker (Docs/transfers.md). The caller closes it.
    public func openGroupDirectory(_ group: String) throws -> (fd: Int32, gid: UInt32) {
        try Self.validate(identifier: group)
        let gid = try uids.gid(forGroup: group)
        try Sys.mkdir(stateRoot, mode: 0o755)
        let root = try Sys.open(stateRoot, O_RDONLY | O_DIRECTORY)
        defer { Sys.close(root) }
        let groups = try Self.directory(beneath: root, "groups", mode: 0o711, owner: (0, 0))
        defer { Sys.close(groups) }
        return (try Self.directory(beneath: groups, group, mode: 0o2770, owner: (0, gid)), gid)
    }
}
