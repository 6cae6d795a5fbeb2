import AppexCommandSupport
import AppexPolicy
import AppexSandbox
import AppexStateDirectory
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An innocent extension that runs beside the cases of files with `bystander: true`: it
/// writes a secret into its data container, then sleeps in its own sandbox. The cases may aim
/// at it (`${bystanderPID}`, `${bystanderContainer}`); afterwards it must still be running
/// and its secret unchanged.
package final class PolicyTestBystander: @unchecked Sendable {
    static let identifier = "dev.appex.test-policy.bystander"
    static let extensionPoint = "com.apple.share-services"
    static let secretName = "Documents/bystander-secret"

    let run: ExtensionRun
    let sandbox: ExtensionSandbox
    let container: Container
    let secret: String
    var pid: Int32 { run.process?.pid ?? -1 }
    var secretPath: String { container.path + "/" + Self.secretName }

    package init(environment: PolicyTestEnvironment, policies: PolicySet) throws {
        var spec = SandboxSpec(
            executable: environment.probeExecutable,
            policy: EffectivePolicy(extensionPoint: Self.extensionPoint, in: policies),
            bundleIdentifier: Self.identifier, arguments: [])
        spec.bundlePath = environment.probeBundle
        spec.executablePath = environment.probeExecutable
        let store = environment.store
        container = try store.prepare(bundleIdentifier: Self.identifier, appGroups: [])
        sandbox = try ExtensionSandbox.create(spec: spec, container: container, store: store)

        secret = "appex-test-policy-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        var write = spec
        write.arguments = ["write", FilesystemView.dataPath + "/" + Self.secretName, secret]
        let wrote = try ExtensionRun.run(write, options: environment.runOptions(timeout: .seconds(10)), sandbox: sandbox)
        guard wrote.exitStatus == 0, (try? String(contentsOfFile: container.path + "/" + Self.secretName, encoding: .utf8)) == secret else {
            sandbox.close()
            throw ValidationErrorText("the bystander could not write its data (\(wrote))")
        }
        var sleep = spec
        sleep.arguments = ["sleep", "86400"]
        run = ExtensionRun(spec: sleep, options: environment.runOptions(timeout: nil), sandbox: sandbox)
        do {
            try run.prepare()
            try run.launch()
        } catch {
            run.cleanup()
            sandbox.close()
            throw error
        }
    }

    /// Whether it is still running: its pidfd has not become readable.
    var isRunning: Bool {
        guard let fd = run.process?.pidfd, fd >= 0 else { return false }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 0
    }

    /// Its secret as it is now on the host, nil if gone.
    var currentSecret: String? { try? String(contentsOfFile: secretPath, encoding: .utf8) }

    package func stop() {
        run.cleanup()
        sandbox.close()
    }
}
