import CAppexLauncher

/// Private network namespaces for extensions whose policy grants no network.
///
/// `clone(CLONE_NEWNET)` costs about half a millisecond on this kind of machine, more than all
/// other sandbox steps together, so the namespace is made before the clone and the child only
/// `setns`es into it. A supervisor can keep a few ready; the namespace holds only a loopback
/// interface that is down, so the extension has no network at all.
public enum NetworkNamespace {
    /// A new network namespace as an fd (close-on-exec; the caller closes it).
    public static func create() throws -> Int32 {
        let fd = appex_netns_create()
        if fd < 0 { throw Sys.fail("create network namespace") }
        return fd
    }
}
