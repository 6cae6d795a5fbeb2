import AppexCgroups
import AppexCommandSupport
import AppexSandbox
import AppexStateDirectory
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Everything one `appex test-policy` run sets up on the host, and takes down again: a state
/// directory, a cgroup parent of its own, a uid range split between the `appex run` cases and
/// each supervisor, the probe staged as a bundle, and (when cases ask) a loopback listener.
/// `hostLeftovers()` looks for anything of it still on the host afterwards.
package final class PolicyTestEnvironment: @unchecked Sendable {
    let stateDirectory: String
    let ownsStateDirectory: Bool
    let cgroups: CgroupManager
    /// Uids for the `appex run` cases (and the bystander).
    let runUIDs: ClosedRange<UInt32>
    /// Uids handed to supervisors, a few each, from the top of the range.
    private let supervisorUIDs: ClosedRange<UInt32>
    static let uidsPerSupervisor: UInt32 = 4
    private let supervisorCounter = Mutex(0)

    /// The probe as a bundle directory: `appex-probe`, and `setuid-probe` when a case uses
    /// `${setuidProbe}`.
    let probeBundle: String
    var probeExecutable: String { probeBundle + "/appex-probe" }
    let probeExtension: String
    /// Listening on the host's 127.0.0.1 for `${hostLoopbackPort}`; nothing ever accepts.
    private(set) var listenerFD: Int32 = -1
    private(set) var listenerPort: Int?

    static let setuidProbePath = FilesystemView.bundlePath + "/setuid-probe"

    package init(
        stateDirectory: String?, uidRange: ClosedRange<UInt32>, probe: String, probeExtension: String,
        setuidProbe: Bool, listener: Bool
    ) throws {
        if let stateDirectory {
            try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
            self.stateDirectory = URL(fileURLWithPath: stateDirectory).standardizedFileURL.path
            ownsStateDirectory = false
        } else {
            var template = Array((NSTemporaryDirectory() + "appex-test-policy-state-XXXXXX").utf8CString)
            guard let p = mkdtemp(&template) else { throw ValidationErrorText("cannot create a state directory") }
            self.stateDirectory = String(cString: p)
            ownsStateDirectory = true
        }
        cgroups = try CgroupManager.detect(parentName: "appex-test-policy-\(getpid())")

        let count = UInt32(uidRange.count)
        guard count >= 64 else { throw ValidationErrorText("--uid-range needs at least 64 uids") }
        let split = uidRange.lowerBound + count / 2
        runUIDs = uidRange.lowerBound...(split - 1)
        supervisorUIDs = split...uidRange.upperBound

        // The bundle sits in a directory only root can enter, so a setuid-root probe in it is
        // never reachable by other users of the host; in the view only the bundle is mounted.
        let privateDir = self.stateDirectory + "/test-policy"
        probeBundle = privateDir + "/probe.appex"
        self.probeExtension = probeExtension
        try? FileManager.default.removeItem(atPath: privateDir)
        try FileManager.default.createDirectory(atPath: probeBundle, withIntermediateDirectories: true)
        guard chmod(privateDir, 0o700) == 0, chmod(probeBundle, 0o755) == 0 else {
            throw ValidationErrorText("cannot set the mode of \(probeBundle): \(String(cString: strerror(errno)))")
        }
        try Self.copyExecutable(probe, to: probeExecutable, mode: 0o755)
        if setuidProbe {
            // Uncontained it would report euid 0; in the sandbox the bundle is mounted nosuid
            // and the extension runs with no new privileges.
            try Self.copyExecutable(probe, to: probeBundle + "/setuid-probe", mode: 0o4755)
        }
        if listener { try openListener() }
    }

    static func copyExecutable(_ from: String, to: String, mode: mode_t) throws {
        try FileManager.default.copyItem(atPath: from, toPath: to)
        guard chown(to, 0, 0) == 0, chmod(to, mode) == 0 else {
            throw ValidationErrorText("cannot set owner and mode of \(to): \(String(cString: strerror(errno)))")
        }
    }

    private func openListener() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ValidationErrorText("socket for the loopback listener: \(String(cString: strerror(errno)))") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok, listen(fd, 4) == 0 else {
            close(fd)
            throw ValidationErrorText("loopback listener: \(String(cString: strerror(errno)))")
        }
        listenerFD = fd
        listenerPort = Int(UInt16(bigEndian: addr.sin_port))
    }

    func runOptions(timeout: Duration?) -> RunOptions {
        RunOptions(stateDirectory: stateDirectory, timeout: timeout, cgroups: cgroups, uidRange: runUIDs)
    }

    var store: ContainerStore { ContainerStore(stateRoot: stateDirectory, uidRange: runUIDs) }

    /// A state directory, cgroup parent and uid range for one supervisor.
    func supervisorSlot() throws -> (state: String, cgroupParent: String, uids: ClosedRange<UInt32>) {
        let n = supervisorCounter.withLock { c -> Int in
            c += 1
            return c - 1
        }
        let low = supervisorUIDs.lowerBound + UInt32(n) * Self.uidsPerSupervisor
        guard low + Self.uidsPerSupervisor - 1 <= supervisorUIDs.upperBound else {
            throw ValidationErrorText("the uid range has no room for another supervisor; widen --uid-range")
        }
        return (stateDirectory + "/supervisor-\(n)", cgroups.parentName + "-s\(n)", low...(low + Self.uidsPerSupervisor - 1))
    }

    /// Every state directory of this run: its own and the supervisors'.
    private var stateDirectories: [String] {
        let n = supervisorCounter.withLock { $0 }
        return [stateDirectory] + (0..<n).map { stateDirectory + "/supervisor-\($0)" }
    }

    /// Every cgroup manager of this run: its own parent and each supervisor's.
    private var allCgroups: [CgroupManager] {
        let n = supervisorCounter.withLock { $0 }
        return [cgroups] + (0..<n).compactMap { try? CgroupManager.detect(parentName: cgroups.parentName + "-s\($0)") }
    }

    /// Cgroups, mounts and processes of this run still on the host, once everything has
    /// ended: cgroup directories under its parents (the empty parents are removed first),
    /// mount points under its state directory in the host's mount table, processes running
    /// as any uid it assigned.
    package func hostLeftovers() -> (cgroups: [String], mounts: [String], processes: [String]) {
        var cgroupDirs: [String] = []
        for manager in allCgroups {
            try? manager.removeParent()
            for parent in manager.parentPaths where FileManager.default.fileExists(atPath: parent) {
                let children = ((try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [])
                    .filter { Self.isDirectory(parent + "/" + $0) }
                cgroupDirs += children.isEmpty ? [parent] : children.map { parent + "/" + $0 }
            }
        }

        let mountinfo = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        let mounts = mountinfo.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 4 else { return nil }
            let point = String(fields[4])
            return point.hasPrefix(stateDirectory + "/") || point == stateDirectory ? point : nil
        }

        var uids = Set<UInt32>()
        for dir in stateDirectories {
            let text = (try? String(contentsOfFile: dir + "/uids", encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                if let last = line.split(separator: " ").last, let uid = UInt32(last) { uids.insert(uid) }
            }
        }
        var processes: [String] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
            guard let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8) else { continue }
            let uidLine = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }
            let ids = uidLine?.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().compactMap { UInt32($0) } ?? []
            if ids.contains(where: uids.contains) {
                let name = status.split(separator: "\n").first.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) } ?? "?"
                processes.append("pid \(entry) (\(name))")
            }
        }
        return (cgroupDirs, mounts, processes)
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
    }

    /// Removes the cgroup parents and, unless the operator named it, the state directory.
    package func tearDown() {
        if listenerFD >= 0 {
            close(listenerFD)
            listenerFD = -1
        }
        for manager in allCgroups { try? manager.removeParent() }
        if ownsStateDirectory { try? FileManager.default.removeItem(atPath: stateDirectory) }
    }
}
