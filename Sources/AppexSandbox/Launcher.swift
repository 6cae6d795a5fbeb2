import CAppexLauncher
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Runs a `LaunchPlan` through the C launcher (clone → sandbox steps → execve).
public enum Launcher {
    /// Reserves low-numbered descriptor slots for later launches, so that each child starts
    /// from a small descriptor table instead of a copy of this process's (with 1,000 live
    /// extensions appexd holds ~12,000 descriptors: copying and closing them cost every launch
    /// milliseconds). Call once, early, while descriptor numbers are low. Returns how many.
    @discardableResult
    public static func reserveDescriptorSlots(_ count: Int = 64) -> Int {
        Int(appex_reserve_descriptor_slots(Int32(count)))
    }

    /// Launches the plan. Throws `LaunchError` naming the failed step (and, for a mount, which
    /// one), e.g. `mount data dir: EACCES (…)`.
    public static func launch(_ plan: LaunchPlan) throws -> LaunchedProcess {
        let arena = CStrings()
        defer { arena.free() }

        let argv = arena.array(plan.arguments)
        let envp = arena.array(plan.environment)
        let root = plan.rootDirectory.map { r in r.hasSuffix("/") ? String(r.dropLast()) : r }
        var ops: [appex_mount_op] = plan.mounts.map { op in
            appex_mount_op(
                kind: op.kind.rawValue, flags: op.flags, mode: op.mode, dev: op.dev,
                source: op.source.map(arena.string),
                target: arena.string(op.target == "/" && root != nil ? root! : (root ?? "") + op.target),
                fd: op.fd)
        }
        var procsFDs = plan.cgroupProcsFDs
        var rlimits: [appex_rlimit] = plan.resourceLimits.map {
            appex_rlimit(resource: $0.resource, soft: $0.soft, hard: $0.hard)
        }
        var groups = plan.credentials?.supplementaryGroups ?? []
        let bpf = plan.seccomp?.bytes ?? []

        var result = appex_result()
        let rc: Int32 = ops.withUnsafeMutableBufferPointer { opsBuf in
            procsFDs.withUnsafeMutableBufferPointer { fdBuf in
                rlimits.withUnsafeMutableBufferPointer { rlBuf in
                    groups.withUnsafeMutableBufferPointer { gBuf in
                        bpf.withUnsafeBytes { bpfBuf in
                            var p = appex_plan()
                            p.path = arena.string(plan.executable)
                            p.argv = argv
                            p.envp = envp
                            p.namespaces = plan.namespaces.rawValue
                            p.hostname = plan.hostname.map(arena.string)
                            p.root = root.map(arena.string)
                            p.ops = UnsafePointer(opsBuf.baseAddress)
                            p.n_ops = Int32(opsBuf.count)
                            p.workdir = plan.workingDirectory.map(arena.string)
                            p.cgroup_procs_fds = UnsafePointer(fdBuf.baseAddress)
                            p.n_cgroup_procs_fds = Int32(fdBuf.count)
                            p.cgroup_dir_fd = plan.cgroupDirectoryFD
                            p.stdin_fd = plan.stdin
                            p.stdout_fd = plan.stdout
                            p.stderr_fd = plan.stderr
                            p.rlimits = UnsafePointer(rlBuf.baseAddress)
                            p.n_rlimits = Int32(rlBuf.count)
                            if let c = plan.credentials {
                                p.set_ids = 1
                                p.uid = c.uid
                                p.gid = c.gid
                                p.groups = UnsafePointer(gBuf.baseAddress)
                                p.n_groups = Int32(gBuf.count)
                            }
                            if let s = plan.seccomp, !bpfBuf.isEmpty {
                                p.bpf = bpfBuf.baseAddress
                                p.bpf_len = UInt32(s.instructionCount)
                                p.seccomp_notify = s.usesNotify ? 1 : 0
                            }
                            p.no_new_privs = plan.noNewPrivileges ? 1 : 0
                            p.enter_pidfd = plan.enterSandboxPIDFD
                            p.exec_fd = plan.executableFD
                            p.channel_fd = plan.channelFD
                            p.netns_fd = plan.networkNamespaceFD
                            return appex_launch(&p, &result)
                        }
                    }
                }
            }
        }
        if rc != 0 {
            throw describe(result, plan: plan)
        }
        return LaunchedProcess(
            pid: result.pid, pidfd: result.pidfd, listenerFD: result.listener_fd,
            phases: LaunchPhases(
                cloneNanos: result.t_child &- result.t_clone,
                sandboxNanos: result.t_ready &- result.t_child,
                execNanos: result.t_exec &- result.t_ready))
    }

    /// Turns (step, index, errno) into a message that names what failed.
    static func describe(_ r: appex_result, plan: LaunchPlan) -> LaunchError {
        let stepName = String(cString: appex_step_name(r.step))
        var what = stepName
        var path: String?
        let i = Int(r.index)
        switch Int(r.step) {
        case Int(APPEX_STEP_MOUNT_OP.rawValue) where i >= 0 && i < plan.mounts.count:
            let op = plan.mounts[i]
            what = op.label
            path = op.kind == .bind ? "\(op.source ?? "") -> \(op.target)" : op.target
        case Int(APPEX_STEP_RLIMIT.rawValue) where i >= 0 && i < plan.resourceLimits.count:
            what = "setrlimit \(plan.resourceLimits[i].resource)"
        case Int(APPEX_STEP_EXEC.rawValue):
            path = plan.executable
            if i == -1 { what = "sandbox setup (the child died before execve)" }
        case Int(APPEX_STEP_ROOT_TMPFS.rawValue):
            path = plan.rootDirectory
        case Int(APPEX_STEP_CLONE.rawValue) where plan.enterSandboxPIDFD >= 0 && r.error == ENOMEM,
            Int(APPEX_STEP_ENTER_PIDNS.rawValue) where r.error == ESRCH:
            // The kernel's answers for a sandbox whose init has exited (ENOMEM: the pid
            // namespace has no init; ESRCH: the init itself is gone).
            what = "\(stepName) (the sandbox init has exited)"
        case Int(APPEX_STEP_CHDIR.rawValue):
            path = plan.workingDirectory
        case Int(APPEX_STEP_SETUID.rawValue), Int(APPEX_STEP_SETGID.rawValue):
            path = plan.credentials.map { "uid \($0.uid) gid \($0.gid)" }
        default:
            break
        }
        return LaunchError(step: r.step, stepName: stepName, what: what, path: path, errno: Errno(rawValue: r.error))
    }
}

/// C strings that live until `free()`: the child reads them from shared memory.
final class CStrings {
    private var owned: [UnsafeMutablePointer<CChar>] = []
    private var arrays: [UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>] = []

    func string(_ s: String) -> UnsafePointer<CChar> {
        let p = strdup(s)!
        owned.append(p)
        return UnsafePointer(p)
    }

    /// A NULL-terminated `char *const[]`.
    func array(_ items: [String]) -> UnsafePointer<UnsafeMutablePointer<CChar>?> {
        let a = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: items.count + 1)
        for (i, s) in items.enumerated() {
            let p = strdup(s)!
            owned.append(p)
            a[i] = p
        }
        a[items.count] = nil
        arrays.append(a)
        return UnsafePointer(a)
    }

    func free() {
        owned.forEach { Glibc.free($0) }
        arrays.forEach { $0.deallocate() }
        owned = []
        arrays = []
    }
}
