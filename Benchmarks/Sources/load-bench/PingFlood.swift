import AppexWire
import CThreadCredentials
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A host (the host uid) that floods appexd with Pings on its control connection: after its
/// Hello, 16 Pings at a time (the protocol's bound on unanswered pings per direction), then
/// their 16 Pongs, again and again until stopped. The probe cannot send Pings, so this is the
/// flood appexd's loop meets, on the control side instead of an extension's channel.
final class PingFlood: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var pongs = 0
    private var problem: String?
    /// appexd's refusal, when it closed the flood's connection.
    private var disconnected: String?
    private let finished = DispatchSemaphore(value: 0)

    init(uid: UInt32, socket path: String) {
        Thread { [self] in
            defer { finished.signal() }
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return stop(because: "socket: errno \(errno)") }
            defer { close(fd) }
            // Connected as the host uid (this thread only), then back to root.
            guard appex_bench_set_thread_euid(uid) == 0 else { return stop(because: "setresuid: errno \(errno)") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            _ = appex_bench_set_thread_euid(0)
            guard connected == 0 else { return stop(because: "connect: errno \(errno)") }
            // A receive never waits more than 5 s: the loop stays bounded if appexd stops answering.
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 1 << 17)
            func send(_ message: Message) -> Bool {
                guard let bytes = try? WireCodec.encode(message) else { return false }
                return Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count
            }
            func receive() -> Message? {
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n > 0 else { return nil }
                return try? WireCodec.decode(Array(buffer[0..<n]))
            }
            guard send(.hello(Hello(bundleIdentifier: "load-ping-flood", pid: getpid()))),
                case .hello? = receive()
            else { return stop(because: "no Hello back") }
            var sequence: UInt64 = 0
            while lock.withLock({ running }) {
                for _ in 0..<16 {
                    sequence += 1
                    guard send(.ping(sequence: sequence)) else { return stop(because: "send: errno \(errno)") }
                }
                for _ in 0..<16 {
                    switch receive() {
                    case .pong?: continue
                    case .refusal(let r)?:
                        // What appexd does to a flood since it allows hosts only a ping rate.
                        lock.withLock { disconnected = "\(r.reason): \(r.message ?? "")" }
                        return
                    default: return stop(because: "a Ping without its Pong (errno \(errno))")
                    }
                }
                lock.withLock { pongs += 16 }
            }
        }.start()
    }

    private func stop(because problem: String) {
        lock.withLock { self.problem = problem }
    }

    /// Stops the flood; the Pongs it got back, what ended it early, if anything did, and
    /// appexd's refusal if appexd ended it.
    func finish() -> (pongs: Int, problem: String?, disconnected: String?) {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { (pongs, problem, disconnected) }
    }
}
