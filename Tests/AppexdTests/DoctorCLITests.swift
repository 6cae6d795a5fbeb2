import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `appex doctor` through the real CLI: green beside a running appexd, and a failing check
/// reported with its fix and a non-zero exit.
@Suite(.serialized) struct DoctorCLITests {
    static func doctor(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let r = try CProgram.run(BuiltProducts.path("appex"), ["doctor"] + arguments)
        return (r.status, r.stdout, r.stderr)
    }

    static func line(_ output: String, _ name: String) -> String? {
        // "[ok]   name: detail": the mark is padded to one width.
        output.split(separator: "\n").map(String.init).first { $0.split(separator: " ").dropFirst().first == "\(name):" }
    }

    @Test(.requiresRoot("the checks pass only as root"))
    func greenBesideARunningAppexd() throws {
        let d = try DaemonTests.Daemon()
        defer { try? FileManager.default.removeItem(atPath: d.root) }
        try d.start()
        defer { _ = d.signal(SIGTERM) }
        let r = try Self.doctor(["--socket", d.socket, "--state-dir", d.root + "/state", "--uid-range", d.uidRange])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        for name in [
            "root", "cgroups", "cgroup-controllers", "libseccomp", "seccomp-kernel", "uid-range-accounts",
            "uid-range-subordinate", "appexd", "policies", "sandbox-init", "state-directory",
        ] {
            let line = try #require(Self.line(r.out, name), "no \(name) line: \(r.out)")
            #expect(!line.hasPrefix("[FAIL]"), "\(line)")
        }
        #expect(Self.line(r.out, "appexd")?.contains("answers at \(d.socket)") == true)

        let j = try Self.doctor(["--socket", d.socket, "--state-dir", d.root + "/state", "--uid-range", d.uidRange, "--json"])
        #expect(j.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any])
        #expect(object["ok"] as? Bool == true)
        let checks = try #require(object["checks"] as? [[String: Any]])
        #expect(checks.contains { $0["name"] as? String == "seccomp-kernel" && $0["status"] as? String == "ok" })
    }

    @Test func aWorldWritableStateDirectoryAndNoAppexdFail() throws {
        let scratch = try ScratchDirectory("doctor")
        defer { scratch.remove() }
        let root = scratch.path
        let state = root + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        chmod(state, 0o777)
        let r = try Self.doctor(["--socket", root + "/nothing.sock", "--state-dir", state])
        #expect(r.status == 1, "\(r.out)\(r.err)")
        let stateLine = try #require(Self.line(r.out, "state-directory"), "\(r.out)")
        #expect(
            stateLine.hasPrefix("[FAIL]") && stateLine.contains("mode 0777") && stateLine.contains("fix: chmod 0755 \(state)"),
            "\(stateLine)")
        let appexdLine = try #require(Self.line(r.out, "appexd"), "\(r.out)")
        #expect(
            appexdLine.hasPrefix("[FAIL]") && appexdLine.contains("nothing answers at \(root)/nothing.sock")
                && appexdLine.contains("fix: start it: systemctl start appexd"), "\(appexdLine)")
        #expect(r.out.contains("checks failed"))

        let j = try Self.doctor(["--socket", root + "/nothing.sock", "--state-dir", state, "--json"])
        #expect(j.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any])
        #expect(object["ok"] as? Bool == false)
        let checks = try #require(object["checks"] as? [[String: Any]])
        let failed = checks.first { $0["name"] as? String == "state-directory" }
        #expect(failed?["status"] as? String == "failed")
        #expect((failed?["fix"] as? String)?.hasPrefix("chmod 0755") == true)
    }
}
