/// The requests each host (each sink) has open, from admission to their end: what the host's
/// cancel and its going away look up. Walking every extension's queue and instances instead
/// grows with the extensions installed, on the loop, for every short-lived client, such as
/// each `appex request`. Loop thread only.
struct OpenRequests {
    /// By the sink's identity: a ticket holds its sink, so the identity is not reused while
    /// an entry names it.
    private var bySink: [ObjectIdentifier: [RequestTicket]] = [:]

    mutating func add(_ ticket: RequestTicket) {
        bySink[ObjectIdentifier(ticket.sink), default: []].append(ticket)
    }

    mutating func remove(_ ticket: RequestTicket) {
        let key = ObjectIdentifier(ticket.sink)
        guard var tickets = bySink[key] else { return }
        tickets.removeAll { $0 === ticket }
        bySink[key] = tickets.isEmpty ? nil : tickets
    }

    /// `sink`'s open requests, oldest first.
    func tickets(of sink: RequestSink) -> [RequestTicket] {
        bySink[ObjectIdentifier(sink)] ?? []
    }

    func ticket(_ hostRequestID: UInt64, of sink: RequestSink) -> RequestTicket? {
        tickets(of: sink).first { $0.hostRequestID == hostRequestID }
    }

    /// Every sink with a request open.
    var sinks: [RequestSink] {
        bySink.values.compactMap { $0.first?.sink }
    }

    var count: Int { bySink.values.reduce(0) { $0 + $1.count } }
}
