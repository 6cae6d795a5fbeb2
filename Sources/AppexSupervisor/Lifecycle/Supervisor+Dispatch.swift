import AppexCgroups
import AppexWire
import AppexWireIO

#if canImport(Glibc)
import Glibc
#endif

extension Supervisor {
    /// Loop only. Admits a host's request and routes it: to an idle instance (warm), a new
    /// one (cold), or the extension's queue. Returns the refusal when it is not admitted
    /// (the descriptors are then closed). Otherwise the sink hears the outcome later.
    public func begin(_ request: HostBeginRequest, descriptors: [Int32], sink: RequestSink) -> Refusal? {
        loop.assertOnLoop()
        if shuttingDown {
            descriptors.forEach { _ = close($0) }
            metrics.refusal(reason: Reason.shutdown.rawValue)
            return Refusal(reason: .shutdown, message: "appexd is shutting down", requestID: request.requestID)
        }
        if let problem = AttachmentDescriptors.problem(descriptors, items: request.items) {
            descriptors.forEach { _ = close($0) }
            metrics.refusal(reason: Reason.invalidAttachment.rawValue)
            return Refusal(reason: .invalidAttachment, message: problem, requestID: request.requestID)
        }
        let entry = catalog[request.bundleIdentifier]
        if let refusal = RequestAdmission.refusal(for: request, entry: entry) {
            descriptors.forEach { _ = close($0) }
            metrics.refusal(reason: refusal.reason.rawValue)
            logger.info("refused a request for \(request.bundleIdentifier) (\(refusal.reason)): \(refusal.message ?? "")")
            // In the history only for an installed extension: a host names any identifier it likes.
            if entry != nil { rememberRefusal(refusal, bundleIdentifier: request.bundleIdentifier) }
            return refusal
        }
        let ticket = RequestTicket(request: request, descriptors: descriptors, sink: sink)
        let bundleIdentifier = request.bundleIdentifier
        ticket.onEnd = { [unowned self, unowned ticket] outcome in
            openRequests.remove(ticket)
            rememberRequest(outcome, bundleIdentifier: bundleIdentifier)
        }
        openRequests.add(ticket)
        let slot = slot(for: request.bundleIdentifier)
        slot.queue.append(ticket)
        pump(slot)
        return nil
    }

    /// Loop only. The host cancels its request `hostRequestID`. A request still waiting ends
    /// at once; one at an extension is cancelled there, and ends when the extension answers
    /// (or with the extension, if it dies first).
    public func cancel(hostRequestID: UInt64, sink: RequestSink) {
        loop.assertOnLoop()
        if let ticket = openRequests.ticket(hostRequestID, of: sink) { cancel(ticket) }
    }

    /// Loop only. Cancels `ticket` where it is: its extension's queue, or the instance serving
    /// it (or launching for it).
    private func cancel(_ ticket: RequestTicket) {
        loop.assertOnLoop()
        guard let slot = slots[ticket.bundleIdentifier] else { return }
        if let i = slot.queue.firstIndex(where: { $0 === ticket }) {
            slot.queue.remove(at: i)
            ticket.end(.cancelled, error: Self.hostCancelled)
            return
        }
        guard let instance = slot.instances.first(where: { $0.ticket === ticket }), !ticket.cancelRequested else { return }
        ticket.cancelRequested = true
        if instance.state == .busy {
            send(.cancelRequest(CancelRequest(requestID: instance.channelRequestID, error: Self.hostCancelled)), to: instance)
        } else {
            // Not sent yet (the instance is still launching): it ends here; the instance
            // stays, warm for the next request.
            instance.ticket = nil
            ticket.end(.cancelled, error: Self.hostCancelled)
        }
    }

    /// Loop only. The host went away: its requests are cancelled as if it had asked.
    public func sinkClosed(_ sink: RequestSink) {
        loop.assertOnLoop()
        for ticket in openRequests.tickets(of: sink) { cancel(ticket) }
    }

    static let hostCancelled = RequestError(domain: RequestTicket.errorDomain, code: 2, message: "cancelled by the host")

    /// Gives waiting requests to instances: idle ones first, then new ones up to the policy's
    /// `maxInstances`.
    func pump(_ slot: ExtensionSlot) {
        guard !shuttingDown else { return }
        while !slot.queue.isEmpty {
            if let idle = slot.instances.first(where: { $0.state == .idle && $0.ticket == nil && !$0.exiting }) {
                let ticket = slot.queue.removeFirst()
                noteQueueTime(ticket)
                dispatch(ticket, to: idle)
                continue
            }
            // An instance still launching without a request takes the next one.
            if let launching = slot.instances.first(where: {
                ($0.state == .launching || $0.state == .awaitingCheckIn) && $0.ticket == nil && !$0.exiting
            }) {
                let ticket = slot.queue.removeFirst()
                noteQueueTime(ticket)
                launching.ticket = ticket
                ticket.cold = true
                enterActiveBand(launching)
                continue
            }
            guard let entry = catalog[slot.identifier] else {
                // Uninstalled while requests waited.
                for t in slot.queue { t.fail(.unknownExtension, "\(slot.identifier) was uninstalled") }
                slot.queue.removeAll()
                return
            }
            let starting = slot.instances.filter { $0.isLive && $0.state != .terminating }.count
            guard starting < entry.lifecycle.maxInstances else { return }
            let ticket = slot.queue.removeFirst()
            noteQueueTime(ticket)
            ticket.cold = true
            spawn(entry, in: slot, for: ticket)
        }
    }

    private func noteQueueTime(_ ticket: RequestTicket) {
        let waited = MonotonicTime.now - ticket.receivedAt
        if waited > 1_000_000 { ticket.addPhase("queue", nanos: waited) }
    }

    /// Sends the ticket's BeginRequest to a checked-in, idle instance and arms its request
    /// timeout.
    func dispatch(_ ticket: RequestTicket, to instance: ExtensionInstance) {
        loop.cancel(instance.idleTimer)
        instance.idleTimer = nil
        instance.ticket = ticket
        instance.state = .busy
        enterActiveBand(instance)
        livenessOnDispatch(instance)
        instance.channelRequestID += 1
        let descriptors = ticket.takeDescriptors()
        defer { descriptors.forEach { _ = close($0) } }
        ticket.sentAt = MonotonicTime.now
        instance.framesSinceBegin = 0
        let begin: Message
        if var events = ticket.transferEvents {
            events.requestID = instance.channelRequestID
            begin = .transferEvents(events)
        } else {
            begin = .beginRequest(BeginRequest(requestID: instance.channelRequestID, items: ticket.items))
        }
        guard send(begin, to: instance, descriptors: descriptors) else { return }
        if let entry = catalog[instance.identifier] {
            armRequestTimeout(instance, timeout: entry.lifecycle.requestTimeout)
        }
    }

    /// Sends to an instance without ever blocking the loop. An extension whose socket buffer
    /// is full is not reading: it is killed as unresponsive. Returns false when not sent.
    @discardableResult
    func send(_ message: Message, to instance: ExtensionInstance, descriptors: [Int32] = []) -> Bool {
        // Exited: only what it sent before is read now (drainChannel).
        guard let channel = instance.channel, !instance.exiting else { return false }
        do {
            if try channel.sendWithoutBlocking(message, descriptors: descriptors) { return true }
            kill(instance, reason: .unresponsive, "its socket buffer is full: it is not reading")
        } catch let error as SocketError where error.errno == EPIPE || error.errno == ECONNRESET {
            // Its end is closed: the process is on its way out, and its exit says why. What
            // it sent before is still to be read (then end of stream, or the drain at exit).
        } catch {
            kill(instance, reason: .protocolError, "sending \(message.type.name) failed: \(error)")
        }
        return false
    }
}
