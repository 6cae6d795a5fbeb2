import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `appex test-policy` through the real CLI (issue 12, items 1, 3 and 4): the shipped suites
/// pass as root with every case run, the deliberately weakened example policy fails exactly
/// the cases it should with a readable reason, and malformed test files are refused with
/// file, line and key.
@Suite(.serialized)
struct TestPolicyCLITests {
    static let root = AppexBinary.packageRoot

    func makeDirectory() throws -> String {
        try ScratchDirectory.make("cli-test-policy")
    }

    /// Writes `text` as a test file in a fresh directory; returns its path.
    func testFile(_ text: String, name: String = "t.yaml") throws -> String {
        let dir = try makeDirectory()
        let path = dir + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    // MARK: the shipped suites, as root

    /// What a test-policy run could leave on the host: its cgroups (named
    /// appex-test-policy-*), mounts under its state directories, processes in its uid range.
    struct HostSnapshot: Equatable {
        var cgroups: Set<String>
        var mounts: Set<String>
        var processes: Set<String>

        static func take() -> HostSnapshot {
            var cgroups = Set<String>()
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified"] {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where name.hasPrefix("appex-test-policy") {
                    cgroups.insert(root + "/" + name)
                }
            }
            let mountinfo = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
            let mounts = Set(mountinfo.split(separator: "\n").map(String.init).filter { $0.contains("appex-test-policy") })
            var processes = Set<String>()
            for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(pid) != nil {
                guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                    let uidLine = status.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") })
                else { continue }
                let ids = uidLine.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().compactMap { UInt32($0) }
                // appex test-policy's default --uid-range.
                if ids.contains(where: { (260_000...265_535).contains($0) }) { processes.insert(pid) }
            }
            return HostSnapshot(cgroups: cgroups, mounts: mounts, processes: processes)
        }
    }

    @Test(.requiresRoot("the sandbox needs root"))
    func theShippedSuitesPassUnderEveryExtensionPoint() throws {
        let dir = try makeDirectory()
        defer { try? ScratchDirectory.removeTree(dir) }
        let before = HostSnapshot.take()
        let r = try AppexBinary.run(["test-policy", "--json", "--junit", dir + "/junit.xml", Self.root + "/Policies/tests"])
        let after = HostSnapshot.take()
        #expect(after == before, "left on the host: \(after)")

        let report = try #require(try r.json() as? [String: Any], "\(r.stderr)")
        let cases = try #require(report["cases"] as? [[String: Any]])
        let failed = cases.filter { $0["passed"] as? Bool != true }
        #expect(r.status == 0, "\(r.stderr)")
        #expect(report["failed"] as? Int == 0)
        #expect(failed.isEmpty, "\(failed.map { "\($0["name"] ?? ""): \($0["observed"] ?? "") \($0["note"] ?? "")" })")
        #expect(report["passed"] as? Int == cases.count)

        // Every shipped extension-point policy (one file each) is covered by both suites.
        let policyFiles = try FileManager.default.contentsOfDirectory(atPath: Self.root + "/Policies/extension-points")
            .filter { $0.hasSuffix(".yaml") }
        for suite in ["hostile", "limits"] {
            let points = Set(cases.filter { $0["suite"] as? String == suite }.compactMap { $0["extensionPoint"] as? String })
            #expect(points.count == policyFiles.count, "\(suite): \(points.sorted())")
        }
        // The other system-call ABIs were tried, and killed, under every extension point.
        #if arch(x86_64)
        let abi = cases.filter { ($0["name"] as? String).map { $0.hasPrefix("i386 ") || $0.hasPrefix("x32 ") } == true }
        #expect(abi.count >= 50 * policyFiles.count)
        #expect(abi.allSatisfy { ($0["observed"] as? String)?.contains("seccomp-violation") == true })
        #endif
        // The bystander ran beside it all and the host was left clean, by the run's own checks.
        for name in ["still running", "kept its data", "nothing left behind"] {
            #expect(cases.contains { $0["name"] as? String == name && $0["passed"] as? Bool == true }, "\(name)")
        }
        // A denied EPERM was told apart from the kernel's own EPERM.
        let pivot = cases.first { $0["name"] as? String == "pivot_root [com.apple.widget-extension]" }
        #expect((pivot?["note"] as? String)?.contains("the filter's answer") == true)

        let junit = try String(contentsOfFile: dir + "/junit.xml", encoding: .utf8)
        #expect(junit.contains("<testsuites name=\"appex test-policy\" tests=\"\(cases.count)\" failures=\"0\">"))
        #expect(junit.contains("<testsuite name=\"hostile\""))
        #expect(!junit.contains("<failure"))
    }

    @Test(.requiresRoot("the sandbox needs root"))
    func aWeakenedPolicyFailsTheRightCasesWithAReason() throws {
        // Docs/examples/weakened-policy: /etc shown, mounting, tracing and reboot allowed,
        // key rings only logged. The hostile suite under it, for the point it weakens.
        let r = try AppexBinary.run([
            "test-policy", "--policy-dir", Self.root + "/Docs/examples/weakened-policy",
            "--filter", "[com.apple.widget-extension]", Self.root + "/Policies/tests/hostile.yaml",
        ])
        #expect(r.status == 1, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let failed = lines.filter { $0.hasPrefix("FAIL ") }
        let names = Set(
            failed.compactMap { line -> String? in
                line.dropFirst("FAIL hostile: ".count).components(separatedBy: " [com.apple.widget-extension]").first
            })
        #expect(
            names == [
                "ptrace", "process_vm_readv", "mount", "umount2", "pivot_root", "fsopen", "open_tree", "move_mount",
                "keyctl", "add_key", "listmount by number", "mount by number", "reboot", "host file by path",
                "host file by dot-dot", "host file through a link planted in the data directory",
            ])
        func reason(_ name: String) -> String? { failed.first { $0.hasPrefix("FAIL hostile: \(name) [") } }
        #expect(reason("mount")?.hasSuffix("observed errno=ENOENT -- answered ENOENT, not EPERM: the call reached the kernel") == true)
        #expect(reason("pivot_root")?.contains("the kernel answers EPERM by itself") == true, "\(reason("pivot_root") ?? "")")
        #expect(reason("reboot")?.contains("not killed: the call returned") == true)
        #expect(reason("host file by dot-dot")?.contains("observed ok bytes=") == true)
        #expect(reason("keyctl")?.contains("answered ENOKEY") == true)
        // Everything else still holds: the other ABIs, the limits, the bystander, the host.
        #expect(lines.filter { $0.hasPrefix("PASS ") }.count == lines.count - failed.count - 1)
        #expect(lines.last == "\(lines.count - failed.count - 1) passed, \(failed.count) failed")
    }

    @Test(.requiresRoot("the sandbox needs root"))
    func aCaseNamesAPolicyFile() throws {
        let policy = Self.root + "/Docs/examples/weakened-policy/extension-points/widget.yaml"
        let file = try testFile(
            """
            policy: \(policy)
            cases:
              - name: mount is contained
                action: mount
                expect: denied
                errno: EPERM
              - name: mount reaches the kernel
                action: mount
                expect: denied
                errno: ENOENT
                by: kernel
              - name: the shipped widget policy still denies it
                extensionPoint: com.apple.widget-extension
                policy: /dev/null.yaml
                action: mount
                expect: denied
                errno: EPERM
            """)
        defer { try? ScratchDirectory.removeTree((file as NSString).deletingLastPathComponent) }
        // /dev/null.yaml does not exist: refused before anything runs.
        let refused = try AppexBinary.run(["test-policy", file])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("\(file):14:13:"), "\(refused.stderr)")
        #expect(refused.stderr.contains("cases[2].policy: policy file /dev/null.yaml does not exist"), "\(refused.stderr)")

        try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: "    policy: /dev/null.yaml\n", with: "")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let r = try AppexBinary.run(["test-policy", file])
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("FAIL t: mount is contained: expected denied EPERM by filter; observed errno=ENOENT") })
        #expect(lines.contains { $0.hasPrefix("PASS t: mount reaches the kernel:") })
        #expect(lines.contains { $0.hasPrefix("PASS t: the shipped widget policy still denies it:") })
        #expect(lines.last == "3 passed, 1 failed")
    }

    @Test(.requiresRoot("the sandbox needs root"))
    func memoryWarningsArriveAtEightyPercentOfTheActiveLimit() throws {
        // appexd warns at 80 % of the active limit: 24 of 30 MiB. 28 MiB touched crosses it,
        // 8 MiB does not, and that case fails saying so.
        let file = try testFile(
            """
            extensionPoint: com.apple.widgetkit-extension
            cases:
              - name: warned past 80 percent
                request: allocate 28
                limits: {memory: 30MiB}
                expect: warned
              - name: not warned below it
                request: allocate 8
                limits: {memory: 30MiB}
                expect: warned
            """)
        defer { try? ScratchDirectory.removeTree((file as NSString).deletingLastPathComponent) }
        let r = try AppexBinary.run(["test-policy", "--jobs", "1", file])
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let warned = try #require(lines.first { $0.contains("warned past 80 percent") })
        #expect(warned.hasPrefix("PASS") && warned.contains("memory-warnings=1"), "\(warned)")
        let below = try #require(lines.first { $0.contains("not warned below it") })
        #expect(
            below.hasPrefix("FAIL")
                && below.hasSuffix("memory-warnings=0 will-expire=0 -- no memory warning arrived (appexd warns at 80 % of the active limit)"),
            "\(below)")
        #expect(lines.contains { $0.hasPrefix("PASS host: nothing left behind") })
        #expect(lines.last == "2 passed, 1 failed")
    }

    // MARK: malformed files (no root needed: files are read before anything runs)

    /// Each mistake, and what the refusal must say: `file:line:column: key: message`.
    static let mistakes: [(yaml: String, location: String, message: String)] = [
        ("cases:\n  - name: a\n    action: getpid\n    expct: allowed\n", ":4:5: cases[0].expct:", "unknown key \"expct\""),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: getpid\n    expect: permitted\n",
            ":5:13: cases[0].expect:", "unknown outcome \"permitted\""
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: mount\n    expect: denied\n",
            ":5:13: cases[0].expect:", "expect: denied needs errno"
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: mount\n    expect: denied\n    errno: EPREM\n",
            ":6:12: cases[0].errno:", "unknown errno \"EPREM\""
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: getpid\n    expect: allowed\n    errno: EPERM\n",
            ":6:12: cases[0].errno:", "errno is only for expect: denied"
        ),
        (
            "cases:\n  - name: a\n    extensionPoint: com.apple.shared-services\n    action: getpid\n    expect: allowed\n",
            ":3:21: cases[0].extensionPoint:", "no policy covers extension point \"com.apple.shared-services\""
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: alloc ${memoryLimit}\n    expect: allowed\n",
            ":4:13: cases[0].action:", "unknown variable ${memoryLimit}"
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: kill ${bystanderPID}\n    expect: allowed\n",
            ":4:13: cases[0].action:", "needs a bystander: set bystander: true"
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: getpid\n    expect: allowed\n  - name: a\n    action: fork\n    expect: allowed\n",
            ":6:11: cases[1].name:", "duplicate case name \"a\" (first at line 3)"
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: getpid\n    request: echo\n    expect: allowed\n",
            ":5:14: cases[0].request:", "request is for the probe extension"
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    request: echo\n    expect: denied\n    errno: EPERM\n",
            ":5:13: cases[0].expect:", "expect: denied needs an action for appex-probe"
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: getpid\n    expect: killed\n    reason: launch-timeout\n",
            ":6:13: cases[0].reason:", "\"launch-timeout\" needs the supervisor"
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    action: getpid\n    limits: {memory: 12 apples}\n    expect: allowed\n",
            ":5:22: cases[0].limits.memory:", "expected a size such as 120MiB"
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    probeConf: {sleep-before-checkin: 5}\n    expect: launch-timeout\n",
            ":4:17: cases[0].probeConf.sleep-before-checkin:", "unknown key \"sleep-before-checkin\""
        ),
        (
            "extensionPoint: com.apple.share-services\ncases:\n  - name: a\n    expect: invisible\n",
            ":3:5: cases[0]:", "expect: invisible needs a path (or an action)"
        ),
        ("extensionPoint: com.apple.share-services\ncases: []\n", ":2:8: cases:", "no cases"),
        ("extensionPoint: com.apple.share-services\ntitle: [unclosed\n", ":3:", "not valid YAML"),
        ("title: no cases\n", ":1:1:", "missing required key \"cases\""),
    ]

    @Test(arguments: mistakes.indices)
    func aMalformedTestFileIsRefusedWithFileLineAndKey(_ index: Int) throws {
        let (yaml, location, message) = Self.mistakes[index]
        let file = try testFile(yaml)
        defer { try? ScratchDirectory.removeTree((file as NSString).deletingLastPathComponent) }
        let r = try AppexBinary.run(["test-policy", file])
        #expect(r.status == 65, "\(r.stdout)")
        #expect(r.stdout.isEmpty, "nothing runs: \(r.stdout)")
        let expected = "error: \(file)\(location)"
        let line = r.stderr.split(separator: "\n").first { $0.hasPrefix(expected) }
        #expect(line?.contains(message) == true, "expected \(expected) … \(message), got:\n\(r.stderr)")
    }

    @Test func everyMistakeInAFileIsListed() throws {
        let file = try testFile(
            """
            extensionPoint: com.apple.share-services
            cases:
              - name: one
                action: mount
                expect: denied
                errno: EPREM
              - name: two
                action: getpid
                expect: alowed
            """)
        defer { try? ScratchDirectory.removeTree((file as NSString).deletingLastPathComponent) }
        let r = try AppexBinary.run(["test-policy", file])
        #expect(r.status == 65)
        #expect(r.stderr.contains("error: \(file):6:12: cases[0].errno: unknown errno \"EPREM\""), "\(r.stderr)")
        #expect(r.stderr.contains("error: \(file):9:13: cases[1].expect: unknown outcome \"alowed\""), "\(r.stderr)")
    }

    @Test func aPolicyFileThatDoesNotLoadIsRefusedWithItsOwnLocation() throws {
        let dir = try makeDirectory()
        defer { try? ScratchDirectory.removeTree(dir) }
        try "extensionPoints: [dev.example.broken]\nmemory:\n  activeHardLimit: lots\n"
            .write(toFile: dir + "/broken.yaml", atomically: true, encoding: .utf8)
        try "policy: broken.yaml\ncases:\n  - name: a\n    action: getpid\n    expect: allowed\n"
            .write(toFile: dir + "/t.yaml", atomically: true, encoding: .utf8)
        let r = try AppexBinary.run(["test-policy", dir + "/t.yaml"])
        #expect(r.status == 65)
        #expect(r.stderr.contains("error: \(dir)/t.yaml:1:9: policy: policy file \(dir)/broken.yaml does not load:"), "\(r.stderr)")
        #expect(r.stderr.contains("error: \(dir)/broken.yaml:3:20: memory.activeHardLimit: expected a size"), "\(r.stderr)")
    }

    @Test func aDirectoryWithoutTestFilesIsRefused() throws {
        let dir = try makeDirectory()
        defer { try? ScratchDirectory.removeTree(dir) }
        let r = try AppexBinary.run(["test-policy", dir])
        #expect(r.status == 66)
        #expect(r.stderr.contains("error: \(dir): no .yaml test files in this directory"), "\(r.stderr)")
    }
}
