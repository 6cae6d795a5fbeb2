// appex-transfer: one background transfer for appexd (Docs/transfers.md).
//
//   appex-transfer --uid UID --gid GID --parent APPEXD-PID
//   fd 0: the plan (AppexTransferPlan.TransferPlan), read to its end
//   fd 3: the app-group directory, opened by appexd beneath its state directory
//   fd 4: reports to appexd (WorkerReport), one line each
//
// It gives up root before it reads anything: the plan holds what an extension chose.
import AppexTransferPlan
import AsyncHTTPClient
import CAppexLinux
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

func fatal(_ message: String) -> Never {
    let line = "appex-transfer: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    Reporter().send(.done(completed: false, bytes: 0, httpStatus: 0, reason: "launch-failed", message: message))
    exit(1)
}

let args = CommandLine.arguments
func argument(_ name: String) -> UInt32 {
    guard let i = args.firstIndex(of: name), i + 1 < args.count, let v = UInt32(args[i + 1]) else {
        fatal("usage: appex-transfer --uid UID --gid GID (plan on fd 0, directory on fd 3, reports on fd 4)")
    }
    return v
}
let uid = argument("--uid"), gid = argument("--gid")
var step: UnsafePointer<CChar>?
if appex_transfer_drop_identity(uid, gid, &step) != 0 {
    fatal("\(step.map { String(cString: $0) } ?? "drop identity"): \(String(cString: strerror(errno)))")
}
// A worker never outlives the appexd that started it: the next appexd resumes its transfer,
// and two workers must never write one file.
if appex_transfer_die_with_parent(pid_t(argument("--parent"))) != 0 {
    fatal("appexd is gone")
}

var input: [UInt8] = []
var chunk = [UInt8](repeating: 0, count: 4096)
while input.count < 256 * 1024 {
    let n = read(0, &chunk, chunk.count)
    if n < 0 && errno == EINTR { continue }
    if n <= 0 { break }
    input += chunk[0..<n]
}
let plan: TransferPlan
do {
    plan = try TransferPlan(decoding: String(decoding: input, as: UTF8.self))
} catch {
    fatal("bad plan: \(error)")
}

var configuration = HTTPClient.Configuration()
configuration.redirectConfiguration = .disallow
let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
let transfer = Transfer(
    plan: plan, directory: ContainerDirectory(fd: ContainerDirectory.descriptor), client: client,
    report: Reporter(), deadline: .now() + .seconds(plan.timeLimitSeconds))
let result = await transfer.run()
_ = try? await client.shutdown().get()
Reporter().send(result)
exit(0)
