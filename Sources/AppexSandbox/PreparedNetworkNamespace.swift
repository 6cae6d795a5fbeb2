import AppexStateDirectory
import CAppexLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A network namespace made ahead of the sandbox that uses it, on a thread of its own.
///
/// A new network namespace is the most expensive part of building a sandbox: kernel work
/// (the loopback device, the namespace's sysctl tables) that costs more than all the mounts
/// (Docs/decisions/0005-network-namespace-made-ahead.md). Made inside the sandbox's clone it sits on the launch
/// path. `appex run` starts one as its first step instead, on the other CPU while this one
/// loads the policy and resolves the spec, and the sandbox's init enters it (`setns`) in
/// place of cloning a new one (`LaunchPlan.networkNamespaceFD`).
///
/// Nothing else ever holds it: it is made by this process, its descriptor is close-on-exec
/// and given to exactly one sandbox, and one not taken is closed. So it isolates exactly as
/// a namespace made by the clone does: an extension gets a namespace no other process is in.
public final class PreparedNetworkNamespace: Sendable {
    /// The C maker until joined (appex_netns_maker_start: its thread is started in C, with
    /// no generic Swift type to instantiate first); then nil and `fd` holds the result.
    private let state: Mutex<(maker: OpaquePointer?, fd: Int32)>

    private init(_ maker: sending OpaquePointer?) { state = Mutex((maker, -1)) }

    /// Starts making one. Failing (no CAP_SYS_ADMIN, no namespaces) is not an error here:
    /// `take()` then returns nil and the sandbox's clone makes its own, and reports why not.
    public static func start() -> PreparedNetworkNamespace {
        PreparedNetworkNamespace(appex_netns_maker_start())
    }

    /// The namespace's descriptor, which the caller now owns and closes; nil when it could
    /// not be made or was taken already. Waits for it when it is still being made.
    public func take() -> Int32? {
        state.withLock { s in
            if let m = s.maker {
                s.fd = appex_netns_maker_finish(m)
                s.maker = nil
            }
            defer { s.fd = -1 }
            return s.fd >= 0 ? s.fd : nil
        }
    }

    deinit {
        if let fd = take() { Sys.close(fd) }
    }
}
