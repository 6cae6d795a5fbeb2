import AppexHostClient
import AppexPolicy
import AppexSandbox
import AppexSupervisor
import Foundation

/// `appex doctor`'s checks of the installation: appexd at its socket, the policies and
/// sandbox init this command would use, the state directory.
enum DoctorInstallChecks {
    static func appexd(socket: String?) -> DoctorCheck {
        let path = HostClient.socketPath(explicit: socket)
        do {
            let client = try HostClient.connect(socketPath: path, identifier: "appex-doctor")
            client.close()
            return .ok("appexd", "answers at \(path)")
        } catch let e as HostClientError where e.kind == .connectionRefused {
            return .warning(
                "appexd", "answers at \(path) but refuses this user: \(e.message)",
                fix: "run as root, or list this uid under hosts or admins in /etc/appex/appexd.yaml")
        } catch {
            return .failed(
                "appexd", "nothing answers at \(path): \(error)",
                fix: "start it: systemctl start appexd (or appexd --socket \(path)); another socket: --socket or $APPEX_SOCKET")
        }
    }

    /// The shipped policies this command and appexd would use, trusted by root and loading.
    static func policies() -> DoctorCheck {
        guard let dir = PolicyLocator.shippedDirectory() else {
            return .failed(
                "policies", "no shipped policy directory (<prefix>/share/appex/Policies beside this executable, or $APPEX_POLICIES)",
                fix: "make install (installs <prefix>/share/appex/Policies) or set APPEX_POLICIES=DIR")
        }
        if let problem = PolicyDirectoryTrust.problem(dir) {
            return .failed("policies", "\(dir): \(problem)", fix: "chown -R root:root \(dir) && chmod -R go-w \(dir)")
        }
        do {
            let set = try PolicyLocator.load()
            return .ok("policies", "\(dir) (\(set.byExtensionPoint.count) extension points)")
        } catch {
            return .failed("policies", "\(dir) does not load: \(error)", fix: "appex policy check \(dir)")
        }
    }

    static func sandboxInit() -> DoctorCheck {
        let path: String
        do { path = try SandboxInitLocator.path() } catch {
            return .failed(
                "sandbox-init", "\(SandboxInitLocator.name) not found beside this executable nor in ../libexec/appex/",
                fix: "make install, or set APPEX_SANDBOX_INIT=PATH")
        }
        var st = stat()
        guard stat(path, &st) == 0 else { return .failed("sandbox-init", "\(path): \(String(cString: strerror(errno)))", fix: "make install") }
        if geteuid() == 0 && (st.st_uid != 0 || st.st_mode & 0o022 != 0) {
            return .failed(
                "sandbox-init", "\(path) is owned by uid \(st.st_uid), mode \(mode(st)): root would run what another user can change",
                fix: "chown root:root \(path) && chmod 0755 \(path)")
        }
        return .ok("sandbox-init", path)
    }

    static func mode(_ st: stat) -> String { "0" + String(st.st_mode & 0o7777, radix: 8) }

    /// The state root: owned by whoever runs appexd (root), writable by no one else; and the
    /// registry inside it readable by no one else.
    static func stateDirectory(_ explicit: String?) -> [DoctorCheck] {
        let dir = explicit ?? SupervisorOptions.defaultStateDirectory
        var st = stat()
        guard lstat(dir, &st) == 0 else {
            if errno == ENOENT { return [.ok("state-directory", "\(dir) does not exist yet; appexd makes it")] }
            return [.failed("state-directory", "\(dir): \(String(cString: strerror(errno)))", fix: "check the path (--state-dir)")]
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            return [
                .failed(
                    "state-directory", "\(dir) is not a directory (a symbolic link or a file)",
                    fix: "remove it, or point appexd elsewhere (--state-dir, stateDirectory in appexd.yaml)")
            ]
        }
        let euid = geteuid()
        if st.st_uid != euid {
            return [
                .failed(
                    "state-directory", "\(dir) belongs to uid \(st.st_uid), not \(euid) who runs appexd",
                    fix: "chown \(euid == 0 ? "root:root" : String(euid)) \(dir)")
            ]
        }
        if st.st_mode & 0o022 != 0 {
            return [
                .failed(
                    "state-directory", "\(dir) is mode \(mode(st)): others may write the registry, bundles and containers",
                    fix: "chmod 0755 \(dir)")
            ]
        }
        var checks: [DoctorCheck] = [.ok("state-directory", "\(dir), owner uid \(st.st_uid), mode \(mode(st))")]
        var registry = stat()
        let database = dir + "/registry.sqlite"
        if lstat(database, &registry) == 0 && registry.st_mode & 0o077 != 0 {
            checks.append(
                .warning(
                    "state-registry", "\(database) is mode \(mode(registry)): others may read the installed extensions",
                    fix: "chmod 0600 \(database)"))
        }
        return checks
    }
}
