import AppexCgroups
import AppexWire
import AppexWireIO

#if canImport(Glibc)
import Glibc
#endif

// What an extension sends appexd over its socketpair. One frame per wakeup: the loop is
// level-triggered, so a busy extension cannot starve the others.

extension Supervisor {
    /// Reads and handles one frame. Returns whether one was read (more may wait).
    @discardableResult
    func channelReadable(_ instance: ExtensionInstance) -> Bool {
        guard let channel = instance.channel else { return false }
        if instance.killReason != nil && instance.state != .terminating {
            // Killed already: what is left on the socket no longer matters.
            closeChannel(instance)
            return false
        }
        let event: WireConnection.Event
        do {
            event = try channel.receive(blocking: false)
        } catch let error as WireError {
            // Malformed, oversized or out of order: this extension's connection ends, and the
            // extension with it; appexd and every other extension go on.
            logger.warning("\(instance.label): protocol error, closing: \(error)")
            closeChannel(instance, refusal: (error.refusalReason, error.description))
            kill(instance, reason: .protocolError, "\(error)")
            return false
        } catch let error as SocketError where error.errno == ECONNRESET {
            // The extension closed its end with frames of ours unread (it exited, or the
            // kernel killed it). The kernel reports that once, before the frames the extension
            // sent are read: they still count, and end of stream follows them.
            return true
        } catch {
            logger.warning("\(instance.label): channel failed: \(error)")
            closeChannel(instance)
            kill(instance, reason: .protocolError, "channel failed: \(error)")
            return false
        }
        switch event {
        case .wouldBlock:
            return false
        case .endOfStream:
            channelEnded(instance)
            return false
        case .stale(let message):
            logger.debug("\(instance.label): stale \(message.type.name) dropped")
            return true
        case .message(let frame):
            instance.framesSinceBegin += 1
            handle(frame, from: instance)
            return true
        }
    }

    /// Its process has exited: what it sent before it did still counts (an answer written
    /// just before `exit` is an answer). The loop reads one frame per wakeup, and the pidfd
    /// can be seen first, so the frames left on the socket are read now, up to what the
    /// socket can hold.
    func drainChannel(_ instance: ExtensionInstance) {
        instance.exiting = true
        var frames = 0
        while frames < 256, channelReadable(instance) { frames += 1 }
    }

    /// Usually the process is exiting and its pidfd follows. One that closes its socket and
    /// lives on is useless to appexd: it gets a moment, then is killed.
    func channelEnded(_ instance: ExtensionInstance) {
        closeChannel(instance)
        if instance.killReason == nil && instance.state != .terminating {
            instance.graceTimer = loop.schedule(after: .milliseconds(500)) { [self] in
                instance.graceTimer = nil
                kill(instance, reason: .protocolError, "closed its socket but did not exit")
            }
        }
    }

    private func handle(_ frame: ReceivedFrame, from instance: ExtensionInstance) {
        switch frame.message {
        case .hello(let hello):
            checkedIn(instance, hello: hello)
        case .pong(let sequence):
            pongReceived(instance, sequence: sequence)
        case .ping(let sequence):
            // Either end may ping (Docs/protocol.md, section 6); an extension has no need to,
            // so one that pings faster than the allowance is ended.
            guard instance.pingAllowance.take() else {
                kill(instance, reason: .protocolError, "pings faster than \(Int(PingAllowance.perSecond)) a second")
                return
            }
            send(.pong(sequence: sequence), to: instance)
        case .refusal(let refusal):
            // The extension ends the connection itself, naming why: recorded as its reason.
            frame.closeDescriptors()
            let said = refusal.message.map { ": \($0)" } ?? ""
            logger.notice("\(instance.label): refused the connection: \(refusal.reason)\(said)")
            kill(instance, reason: .protocolError, "the extension refused the connection: \(refusal.reason)\(said)")
        case .completeRequest(let complete):
            if refusedAttachments(frame, items: complete.items, from: instance, requestID: complete.requestID) { return }
            answered(instance, requestID: complete.requestID, descriptors: frame.descriptors) { ticket in
                ticket.end(.completed, items: complete.items, returned: frame.descriptors)
            }
        case .cancelRequest(let cancel):
            if refusedAttachments(frame, items: [], from: instance, requestID: cancel.requestID) { return }
            answered(instance, requestID: cancel.requestID, descriptors: frame.descriptors) { ticket in
                ticket.end(.cancelled, returned: frame.descriptors, error: cancel.error)
            }
        case .scheduleTransfer(let schedule):
            frame.closeDescriptors()
            scheduleTransfer(schedule, from: instance)
        case .cancelSession(let cancel):
            let n = cancelTransfersOnLoop(
                bundleIdentifier: instance.identifier, sessionIdentifier: cancel.sessionIdentifier,
                transferID: nil, by: instance.label)
            logger.info("\(instance.label): cancelled \(n) transfers of session \(cancel.sessionIdentifier)")
        case .openURL(let open):
            frame.closeDescriptors()
            guard let ticket = instance.ticket, open.requestID == instance.channelRequestID else { return }
            let channelRequestID = instance.channelRequestID
            ticket.sink.openURL(open.url, requestID: ticket.hostRequestID) { [self] accepted in
                // Only while that request is still the one in flight.
                guard instance.ticket === ticket, instance.state == .busy else { return }
                send(.openURLResult(OpenURLResult(requestID: channelRequestID, accepted: accepted)), to: instance)
            }
        default:
            // The state machine lets through only what an extension may send; anything else
            // here is a message appexd does not act on.
            frame.closeDescriptors()
            logger.debug("\(instance.label): ignored \(frame.message.type.name)")
        }
    }

    /// An answer whose descriptors may not go to the host (AttachmentDescriptors) ends its
    /// request failed, `invalid-attachment`, without them; the instance goes on.
    private func refusedAttachments(
        _ frame: ReceivedFrame, items: [AppexWire.ExtensionItem],
        from instance: ExtensionInstance, requestID: UInt64
    ) -> Bool {
        guard let problem = AttachmentDescriptors.problem(frame.descriptors, items: items) else { return false }
        frame.closeDescriptors()
        logger.warning("\(instance.label): answer refused: \(problem)")
        answered(instance, requestID: requestID, descriptors: []) { ticket in
            ticket.fail(.invalidAttachment, "the extension returned \(problem)")
        }
        return true
    }

    /// The extension answered its request: the host gets the outcome, the instance idles.
    /// `descriptors` came with the answer: closed here when the answer is not for the request
    /// in flight.
    private func answered(
        _ instance: ExtensionInstance, requestID: UInt64, descriptors: [Int32],
        _ end: (RequestTicket) -> Void
    ) {
        // A terminating instance may still answer the request it was serving (its grace is
        // for that); it takes no other.
        guard let ticket = instance.ticket, instance.state == .busy || instance.state == .terminating,
            requestID == instance.channelRequestID
        else {
            descriptors.forEach { _ = close($0) }
            return
        }
        ticket.addPhase("roundTrip", nanos: MonotonicTime.now - ticket.sentAt)
        // One read of the cgroup's high-water mark (a few µs) serves twice: the peak the host
        // is told, and whether the footprint must be read for the limits (Memory/).
        let peak = try? instance.run?.run.cgroup?.memoryPeak()
        ticket.peakMemoryBytes = peak.map { UInt64(max($0, 0)) }
        let memory = footprintForAnswer(instance, peak: peak)
        if let memory {
            judgeFootprint(instance, memory)
            if instance.killReason != nil {
                // Over its fatal limit: killed; the request ends with it (per-process-limit).
                descriptors.forEach { _ = close($0) }
                return
            }
        }
        loop.cancel(instance.willExpireTimer)
        loop.cancel(instance.requestTimer)
        instance.willExpireTimer = nil
        instance.requestTimer = nil
        instance.ticket = nil
        instance.requestsServed += 1
        guard instance.state == .busy else {
            end(ticket)
            return
        }
        instance.state = .idle
        end(ticket)
        becameIdle(instance)
        // Idle now: the same reading against the inactive limits.
        if instance.state == .idle, let memory { judgeFootprint(instance, memory) }
    }

    /// Stops watching the channel and closes appexd's end (telling the extension why first,
    /// when there is a refusal). Once only: the descriptor number may be reused afterwards.
    func closeChannel(_ instance: ExtensionInstance, refusal: (Reason, String)? = nil) {
        guard let channel = instance.channel else { return }
        instance.channel = nil
        instance.channelClosed = true
        loop.unregister(channel.socket.fd)
        if let (reason, message) = refusal {
            channel.refuseAndClose(reason, message: message)
        } else {
            channel.close()
        }
    }
}
