import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The attacks on appexd's control socket as they were found (issue 30, findings 1 and 4),
/// made through the real appexd by real processes of an unprivileged uid (setpriv): a flood
/// of connections that never say Hello, a host multiplying one descriptor over many requests,
/// root flooding appexd out of descriptors, and descriptors that are not data sent both ways.
@Suite(.serialized) struct ControlBoundaryTests {
    typealias Daemon = DaemonTests.Daemon

    /// uid 4242 may host (DaemonTests' configuration); 4243 may do nothing.
    static let configuration = """
        hosts: [4242]
        admins: []
        clients:
          helloTimeout: 2s
          connections: 24
          connectionsPerUser: 8
          requestsPerConnection: 32
          descriptorsPerConnection: 64
        """

    func withDaemon(prefix: [String] = [], _ body: (Daemon) async throws -> Void) async throws {
        try RequiresRoot.check("appexd needs root")
        let d = try Daemon()
        defer { d.cleanUp() }
        try Data(Self.configuration.utf8).write(to: URL(fileURLWithPath: d.root + "/appexd.yaml"))
        d.logPath = d.root + "/appexd.log"
        d.commandPrefix = prefix
        try d.start()
        try await body(d)
    }

    @Test func connectionsWithoutHelloAreCappedAndClosedAndRootStillGetsIn() async throws {
        try await withDaemon { d in
            let pid = try #require(d.pid)
            let before = Self.descriptorCount(pid)
            let attacker = try Attacker(d, uid: 4243, script: Self.flood, arguments: [d.socket, "300", "3"])
            defer { attacker.end() }
            let held = try #require(attacker.line().flatMap { Int($0.dropFirst("held ".count)) })
            // The cap on a uid that may do nothing, not a failing accept, is what bounded it.
            #expect(held >= 1 && held <= 4, "connections held: \(held)")
            #expect(Self.descriptorCount(pid) <= before + 4 + 2, "appexd grew from \(before) descriptors")
            let list = try d.appex(["list"])
            #expect(list.status == 0, "root kept out: \(list.err)")
            attacker.proceed()
            let after = try #require(attacker.line().flatMap { Int($0.dropFirst("held-after ".count)) })
            #expect(after == 0, "connections still open past the Hello deadline: \(after)")
            let log = try String(contentsOfFile: d.root + "/appexd.log", encoding: .utf8)
            let refusals = log.split(separator: "\n").filter { $0.contains("refused a connection of") }
            #expect(refusals.count <= 5, "refusals are rate-limited: \(refusals.count) lines")
        }
    }

    @Test func oneDescriptorSentWithManyRequestsIsBounded() async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            let pid = try #require(d.pid)
            let before = Self.descriptorCount(pid)
            let frames = d.root + "/frames"
            try FileManager.default.createDirectory(atPath: frames, withIntermediateDirectories: true)
            chmod(frames, 0o777)
            try Data(WireCodec.encode(.hello(Hello(bundleIdentifier: "attacker", pid: 0)))).write(to: URL(fileURLWithPath: frames + "/hello"))
            let attachments = (0..<16).map { Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: $0)) }
            for i in 0..<64 {
                let item = AppexWire.ExtensionItem(
                    attachments: attachments,
                    userInfo: ["probe.action": .string("sleep"), "probe.arg": .string("4000")])
                let begin = HostBeginRequest(requestID: UInt64(i + 1), bundleIdentifier: id, items: [item])
                try Data(WireCodec.encode(.hostBeginRequest(begin))).write(to: URL(fileURLWithPath: frames + "/begin-\(i)"))
            }
            try Data("data".utf8).write(to: URL(fileURLWithPath: frames + "/attachment"))
            chmod(frames + "/attachment", 0o644)

            let attacker = try Attacker(
                d, uid: 4242, script: Self.amplify,
                arguments: [d.socket, frames, "64", frames + "/attachment", "16"])
            defer { attacker.end() }
            #expect(attacker.line() == "sent")
            let during = Self.descriptorCount(pid)
            let answers = try Self.frames(in: frames + "/answers").map { try WireCodec.decode($0) }
            let busy = answers.filter { if case .refusal(let r) = $0 { r.reason == .busy } else { false } }
            // 64 requests with 16 descriptors each: 1,024 held without bounds.
            #expect(busy.count >= 32, "refused as busy: \(busy.count) of 64")
            #expect(during - before < 300, "appexd held \(during - before) more descriptors")
            attacker.proceed()
        }
    }

    @Test func outOfDescriptorsTheLoopDoesNotSpinAndRecovers() async throws {
        // A hard limit low enough for root's own flood to exhaust (administrators are not
        // capped below it), so accept meets EMFILE.
        try await withDaemon(prefix: ["/usr/bin/prlimit", "--nofile=200:200", "--"]) { d in
            let pid = try #require(d.pid)
            let attacker = try Attacker(d, uid: nil, script: Self.flood, arguments: [d.socket, "400", "0"])
            defer { attacker.end() }
            #expect(attacker.line()?.hasPrefix("held ") == true)
            let cpuBefore = Self.cpuTicks(pid)
            try await Task.sleep(for: .seconds(1))
            let spent = Self.cpuTicks(pid) - cpuBefore
            // A loop spinning on a readable listener spends the whole second.
            #expect(spent < sysconf(Int32(_SC_CLK_TCK)) / 4, "appexd spent \(spent) ticks in one second")
            attacker.end()
            try await Task.sleep(for: .seconds(3))
            let list = try d.appex(["list"])
            #expect(list.status == 0, "not serving again: \(list.err)")
            let log = try String(contentsOfFile: d.root + "/appexd.log", encoding: .utf8)
            let lines = log.split(separator: "\n").filter { $0.contains("out of descriptors") }
            #expect(!lines.isEmpty && lines.count <= 6, "out-of-descriptors lines: \(lines.count)")
        }
    }

    /// `appex request --file` refuses a directory itself; a host of its own making does not.
    @Test(arguments: [("/tmp", "a directory"), ("/proc/self/ns/net", "a namespace descriptor")])
    func aHostsCapabilityAttachmentIsRefused(source: String, fault: String) async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            let frames = d.root + "/frames"
            try FileManager.default.createDirectory(atPath: frames, withIntermediateDirectories: true)
            chmod(frames, 0o777)
            try Data(WireCodec.encode(.hello(Hello(bundleIdentifier: "attacker", pid: 0)))).write(to: URL(fileURLWithPath: frames + "/hello"))
            let item = AppexWire.ExtensionItem(
                attachments: [Attachment(typeIdentifiers: ["public.folder"], content: .descriptor(index: 0))],
                userInfo: ["probe.action": .string("fds")])
            let begin = HostBeginRequest(requestID: 1, bundleIdentifier: id, items: [item])
            try Data(WireCodec.encode(.hostBeginRequest(begin))).write(to: URL(fileURLWithPath: frames + "/begin-0"))
            let attacker = try Attacker(d, uid: 4242, script: Self.amplify, arguments: [d.socket, frames, "1", source, "1"])
            defer { attacker.end() }
            #expect(attacker.line() == "sent")
            let answers = try Self.frames(in: frames + "/answers").map { try WireCodec.decode($0) }
            guard case .refusal(let refusal) = answers.first else {
                Issue.record("expected a refusal, got \(answers)")
                return
            }
            #expect(refusal.reason == .invalidAttachment)
            #expect(refusal.message?.contains("items[0].attachments[0] (descriptor 0) is \(fault)") == true, "\(refusal)")
            // Nothing reached the extension: it was never launched.
            #expect(d.sandboxProcesses().isEmpty)
            // A read-only regular file still travels, through the real CLI.
            let file = d.root + "/note.txt"
            try Data("note".utf8).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o644)
            let ok = try d.appex(["request", id, "--file", file, "--user-info", "probe.action=fds", "--json"], asUID: 4242)
            #expect(ok.status == 0 && ok.out.contains("note"), "\(ok.out) \(ok.err)")
        }
    }

    @Test func anExtensionReturningACapabilityIsRefused() async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            for (kind, fault) in [("directory", "a directory"), ("socket", "a socket"), ("writable", "open for writing")] {
                let r = try d.appex(["request", id, "--user-info", "probe.action=return-fd", "--user-info", "probe.arg=\(kind)", "--json"])
                #expect(r.status != 0, "\(kind)")
                #expect(r.out.contains("invalid-attachment") && r.out.contains(fault), "\(kind): \(r.out) \(r.err)")
            }
            let ok = try d.appex(["request", id, "--user-info", "probe.action=return-fd", "--user-info", "probe.arg=readonly", "--json"])
            #expect(ok.status == 0 && ok.out.contains("completed"), "\(ok.out) \(ok.err)")
            // The extension went on serving: the refusal ended the request, not the instance.
            let echo = try d.appex(["request", id, "--text", "still here", "--json"])
            #expect(echo.out.contains("still here") && echo.out.contains("\"cold\" : false"), "\(echo.out)")
        }
    }

    /// A host pinging as fast as it reads the pongs held a good part of a core of appexd's
    /// loop (the load benchmark measured it): past a burst and a rate it is disconnected.
    @Test func aHostFloodingPingsIsDisconnected() async throws {
        try await withDaemon { d in
            let frames = d.root + "/frames"
            try FileManager.default.createDirectory(atPath: frames, withIntermediateDirectories: true)
            chmod(frames, 0o777)
            try Data(WireCodec.encode(.hello(Hello(bundleIdentifier: "pinger", pid: 0)))).write(to: URL(fileURLWithPath: frames + "/hello"))
            try Data(WireCodec.encode(.ping(sequence: 1))).write(to: URL(fileURLWithPath: frames + "/ping"))
            let attacker = try Attacker(d, uid: 4242, script: Self.pingFlood, arguments: [d.socket, frames, "5000"])
            defer { attacker.end() }
            let pongs = try #require(attacker.line().flatMap { Int($0.dropFirst("pongs ".count)) })
            #expect(pongs < 5000, "every ping was answered")
            let answers = try Self.frames(in: frames + "/answers").map { try WireCodec.decode($0) }
            guard case .refusal(let refusal) = answers.last else {
                Issue.record("no refusal after \(pongs) pongs")
                return
            }
            #expect(refusal.reason == .protocolError && refusal.message?.contains("pings a second") == true, "\(refusal)")
            // The host may come back and be served as before.
            #expect(try d.appex(["list"]).status == 0)
        }
    }

    // MARK: the attackers

    /// Opens N connections and never sends Hello; prints how many appexd left open, then, after
    /// a line on stdin and N seconds, how many are open still.
    static let flood = """
        import select, socket, sys, time
        path, count, wait = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
        socks = []
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                s.connect(path)
                socks.append(s)
            except OSError:
                s.close()
        def still_open():
            return sum(1 for s in socks if not select.select([s], [], [], 0)[0])
        time.sleep(1)
        print("held", still_open(), flush=True)
        sys.stdin.readline()
        time.sleep(wait)
        print("held-after", still_open(), flush=True)
        sys.stdin.readline()
        """

    /// Says Hello, then sends each begin frame with one descriptor (of the file named, opened
    /// read-only) as many times as asked, keeps every answer (length-prefixed) for 2 s, prints
    /// "sent" and holds on until stdin says.
    static let amplify = """
        import os, socket, sys
        path, frames, count, source, copies = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        s.send(open(frames + "/hello", "rb").read())
        s.recv(200000)
        fd = os.open(source, os.O_RDONLY)
        for i in range(count):
            try:
                socket.send_fds(s, [open(f"{frames}/begin-{i}", "rb").read()], [fd] * copies)
            except OSError:
                break
        s.settimeout(2.0)
        with open(frames + "/answers", "wb") as out:
            try:
                while True:
                    data = s.recv(200000)
                    if not data:
                        break
                    out.write(len(data).to_bytes(4, "little") + data)
            except (socket.timeout, OSError):
                pass
        print("sent", flush=True)
        sys.stdin.readline()
        """

    /// Says Hello, then pings and reads the answer, up to N times or until appexd closes the
    /// connection; keeps every frame after the Hello (length-prefixed) and prints the pongs.
    static let pingFlood = """
        import socket, sys
        path, frames, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        s.settimeout(5.0)
        s.send(open(frames + "/hello", "rb").read())
        s.recv(200000)
        ping = open(frames + "/ping", "rb").read()
        pongs = 0
        with open(frames + "/answers", "wb") as out:
            try:
                for _ in range(count):
                    s.send(ping)
                    data = s.recv(200000)
                    if not data:
                        break
                    out.write(len(data).to_bytes(4, "little") + data)
                    if data[6] != 0x04:
                        break
                    pongs += 1
            except OSError:
                pass
        print("pongs", pongs, flush=True)
        sys.stdin.readline()
        """

    /// A Python attacker run as `uid` through setpriv (as root when nil), talking over pipes.
    final class Attacker {
        let process = Process()
        let input = Pipe(), output = Pipe()

        init(_ d: Daemon, uid: UInt32?, script: String, arguments: [String]) throws {
            let path = d.root + "/attacker-\(UUID().uuidString).py"
            try Data(script.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o644)
            var command = ["/usr/bin/env", "python3", path] + arguments
            if let uid { command = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + command }
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        /// The attacker's next line, nil at its end.
        func line() -> String? {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while read(output.fileHandleForReading.fileDescriptor, &byte, 1) == 1 {
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }

        func proceed() { try? input.fileHandleForWriting.write(contentsOf: Data("\n".utf8)) }

        /// SIGKILL: the attacker inherits the test runner's signal mask, SIGTERM blocked.
        func end() {
            try? input.fileHandleForWriting.close()
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    // MARK: reading appexd from outside

    static func descriptorCount(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// utime + stime of `pid`, in clock ticks.
    static func cpuTicks(_ pid: Int32) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Fields after the command: state is 3rd overall; utime and stime are 14th and 15th.
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    /// The length-prefixed frames the amplify attacker kept.
    static func frames(in path: String) throws -> [[UInt8]] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var frames: [[UInt8]] = [], offset = 0
        while offset + 4 <= bytes.count {
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            offset += 4
            guard offset + length <= bytes.count else { break }
            frames.append(Array(bytes[offset..<offset + length]))
            offset += length
        }
        return frames
    }
}
