import AppexCgroups
import AppexSandbox
import AppexStateDirectory
import AppexWire
import AppexWireIO

#if canImport(Glibc)
import Glibc
#endif

// The launch and its deadline: from the moment appexd decides to spawn an instance until the
// extension checks in. The policy's `launchDeadline` (default 1 s) counts from the decision,
// so it covers everything the host waits for: building the sandbox on a first launch, the
// clone into it, exec, the runtime's start-up and the SDK's check-in. A miss kills the
// instance with `launch-timeout` and fails its request with that reason.

extension Supervisor {
    /// Starts an instance of `entry` for `ticket` (nil: a warm-up with no request).
    func spawn(_ entry: CatalogEntry, in slot: ExtensionSlot, for ticket: RequestTicket?) {
        instanceCounter += 1
        let instance = ExtensionInstance(number: instanceCounter, identifier: entry.identifier)
        instance.ticket = ticket
        if slot.sandboxStale && slot.instances.isEmpty {
            // Nobody is in the old sandbox now: this launch (queued after the close) builds one
            // for the policy the catalog holds.
            slot.sandboxStale = false
            let holder = slot.sandbox
            slot.launchQueue.async { holder.close() }
        }
        slot.instances.append(instance)
        if ticket != nil { enterActiveBand(instance) } else { enterBand(instance, entry.lifecycle.idleBand.value) }
        let deadline = entry.lifecycle.launchDeadline
        instance.deadlineTimer = loop.schedule(after: deadline) { [self] in
            launchDeadlineMissed(instance, deadline: deadline)
        }

        let mine: WireSocket, theirs: WireSocket
        do {
            (mine, theirs) = try WireSocket.pair()
        } catch {
            launchFailed(instance, in: slot, "socketpair: \(error)")
            return
        }
        let spec = entry.spec
        let options = runOptions
        let holder = slot.sandbox
        let started = instance.launchStartedAt
        slot.launchQueue.async { [self] in
            let outcome = Self.launch(spec: spec, options: options, sandbox: holder, channel: theirs.fd, started: started)
            theirs.close()
            loop.post { [self] in launched(instance, in: slot, outcome, socket: mine) }
        }
    }

    /// What the launch worker reports back.
    struct LaunchOutcome: @unchecked Sendable {
        var handle: RunHandle?
        var error: String?
        var phases: [(String, UInt64)] = []
    }

    /// On the slot's launch queue: the sandbox (built when missing), the run's preparation
    /// (container, cgroup, seccomp program, log) and the clone → exec with the channel at fd 3.
    static func launch(
        spec: SandboxSpec, options: RunOptions, sandbox holder: SandboxHolder, channel: Int32,
        started: UInt64
    ) -> LaunchOutcome {
        var outcome = LaunchOutcome()
        let t0 = MonotonicTime.now
        var built = false
        var run: ExtensionRun?
        do {
            let sandbox = try holder.current {
                built = true
                return try buildSandbox(spec: spec, options: options)
            }
            let t1 = MonotonicTime.now
            let r = ExtensionRun(spec: spec, options: options, sandbox: sandbox, channelFD: channel)
            run = r
            try r.prepare()
            let t2 = MonotonicTime.now
            let process = try r.launch()
            let t3 = MonotonicTime.now
            outcome.phases.append(("handOff", t0 - started))
            if built { outcome.phases.append(("view", t1 - t0)) }
            outcome.phases.append(("prepare", t2 - t1))
            outcome.phases.append(("clone", process.phases.cloneNanos))
            outcome.phases.append(("sandbox", process.phases.sandboxNanos))
            outcome.phases.append(("exec", process.phases.execNanos))
            outcome.phases.append(("spawn", t3 - started))
            outcome.handle = RunHandle(run: r, process: process)
        } catch {
            run?.cleanup()
            outcome.error = "\(error)"
        }
        return outcome
    }

    /// The extension's container and its sandbox around it: what a first launch builds, or a
    /// prebuild ahead of it (Supervisor+Prebuild.swift).
    static func buildSandbox(spec: SandboxSpec, options: RunOptions) throws -> ExtensionSandbox {
        let store = ContainerStore(stateRoot: options.stateDirectory, uidRange: options.uidRange)
        let container = try store.prepare(bundleIdentifier: spec.bundleIdentifier, appGroups: spec.appGroups)
        return try ExtensionSandbox.create(
            spec: spec, container: container, store: store,
            isolateNetwork: options.isolateNetwork)
    }

    /// Back on the loop: watch the new process and its channel, or fail its request.
    func launched(_ instance: ExtensionInstance, in slot: ExtensionSlot, _ outcome: LaunchOutcome, socket: WireSocket) {
        loop.assertOnLoop()
        guard let handle = outcome.handle else {
            socket.close()
            launchFailed(instance, in: slot, outcome.error ?? "unknown error")
            return
        }
        instance.run = handle
        instance.pid = handle.process.pid
        for (name, nanos) in outcome.phases { instance.ticket?.addPhase(name, nanos: nanos) }
        instance.launchPhases = outcome.phases
        if let view = outcome.phases.first(where: { $0.0 == "view" }) { metrics.sandboxBuilt(trigger: "launch", nanos: view.1) }
        let channel = WireConnection(socket: socket, role: .supervisor)
        instance.channel = channel
        do {
            try loop.register(handle.process.pidfd) { [self] in processExited(instance) }
            try loop.register(socket.fd) { [self] in channelReadable(instance) }
        } catch {
            logger.error("\(instance.label): cannot watch it: \(error)")
            kill(instance, reason: .launchFailed, "cannot watch it: \(error)")
            return
        }
        if instance.killReason != nil {
            // The deadline passed (or shutdown began) while the launch was under way.
            signalKill(instance)
            return
        }
        instance.state = .awaitingCheckIn
        if let entry = catalog[instance.identifier] {
            armFootprintLimits(instance, entry.lifecycle.memory)
        }
        logger.debug("\(instance.label): spawned, waiting for check-in")
    }

    private func launchFailed(_ instance: ExtensionInstance, in slot: ExtensionSlot, _ message: String) {
        logger.error("\(instance.label): launch failed: \(message)")
        instance.state = .exited
        instance.cancelTimers(loop)
        slot.instances.removeAll { $0 === instance }
        record(instance, reason: .launchFailed, message: message, signal: nil, status: nil, peak: nil)
        if let ticket = instance.ticket {
            instance.ticket = nil
            ticket.fail(.launchFailed, "\(instance.identifier) could not be launched: \(message)")
        }
        // Requests still queued would fail the same way; let them try (the cause may pass).
        pump(slot)
    }

    func launchDeadlineMissed(_ instance: ExtensionInstance, deadline: Duration) {
        instance.deadlineTimer = nil
        guard instance.state == .launching || instance.state == .awaitingCheckIn else { return }
        let ms = deadline.wholeMilliseconds
        logger.warning("\(instance.label): no check-in within its launch deadline of \(ms) ms")
        kill(instance, reason: .launchTimeout, "no check-in within the launch deadline of \(ms) ms")
    }

    /// The extension's Hello: the deadline is met. appexd answers with its own Hello and the
    /// instance serves its request, or idles.
    func checkedIn(_ instance: ExtensionInstance, hello: Hello) {
        guard instance.state == .awaitingCheckIn else {
            kill(instance, reason: .protocolError, "Hello in state \(instance.state.rawValue)")
            return
        }
        guard hello.bundleIdentifier == instance.identifier else {
            closeChannel(instance, refusal: (.protocolError, "this socket belongs to \(instance.identifier)"))
            kill(instance, reason: .protocolError, "checked in as \(hello.bundleIdentifier)")
            return
        }
        loop.cancel(instance.deadlineTimer)
        instance.deadlineTimer = nil
        instance.checkedInAt = MonotonicTime.now
        let checkIn = instance.checkedInAt - instance.launchStartedAt
        instance.ticket?.addPhase("checkIn", nanos: checkIn)
        instance.checkInNanos = checkIn
        rememberLaunch(instance, checkInNanos: checkIn)
        guard send(.hello(Hello(bundleIdentifier: "appexd", pid: getpid())), to: instance) else { return }
        instance.state = .idle
        logger.debug("\(instance.label): checked in after \(checkIn / 1000) µs")
        startLiveness(instance)
        if let ticket = instance.ticket {
            dispatch(ticket, to: instance)
        } else {
            becameIdle(instance)
        }
    }
}
