import AppexHostClient
import BenchSupport
import CThreadCredentials
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Connects `count` host clients as `uid`: on a thread of its own whose effective uid alone is
/// switched (SO_PEERCRED takes the uid at connect), so appexd counts them as that host uid's,
/// under the host caps, as a real host process would be.
func connectHosts(_ count: Int, uid: UInt32, socket: String) -> [HostClient] {
    final class Box: @unchecked Sendable {
        var clients: [HostClient] = []
        var error: String?
    }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        defer { done.signal() }
        guard appex_bench_set_thread_euid(uid) == 0 else {
            box.error = "setresuid(-1, \(uid), -1) on the thread: errno \(errno)"
            return
        }
        defer { _ = appex_bench_set_thread_euid(0) }
        for i in 0..<count {
            do {
                box.clients.append(try HostClient.connect(socketPath: socket, identifier: "load-host-\(i)"))
            } catch {
                box.error = "host \(i) of \(count) (uid \(uid)) could not connect: \(error)"
                return
            }
        }
    }
    thread.start()
    done.wait()
    if let error = box.error {
        for client in box.clients { client.close() }
        fail(error)
    }
    return box.clients
}

/// One host: `requests` requests one after another (a host waits for each outcome), its i-th
/// to extension (host + i) mod 8, so the hosts meet each extension at different moments.
func runHost(_ client: HostClient, index host: Int, requests: Int, deadline: Duration) async -> [Sample] {
    var samples: [Sample] = []
    samples.reserveCapacity(requests)
    var sent: [Behaviour: Int] = [:]
    let all = Behaviour.allCases
    for i in 0..<requests {
        let behaviour = all[(host + i) % all.count]
        let k = sent[behaviour, default: 0]
        sent[behaviour] = k + 1
        let t0 = now()
        let result = await request(client, behaviour, items: behaviour.items(host: host, k: k), deadline: deadline)
        var sample = Sample(behaviour, result, nanoseconds: now() - t0)
        sample.start = t0
        samples.append(sample)
    }
    return samples
}
