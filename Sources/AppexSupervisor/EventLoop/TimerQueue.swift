/// The loop's pending timers, soonest first. A supervisor holds a handful per live instance
/// (deadline, ping, request timeout, idle exit), so a sorted array beats a heap here.
struct TimerQueue {
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
        var body: () -> Void
    }

    private var entries: [Entry] = []
    private var nextID: UInt64 = 1

    mutating func add(at deadline: UInt64, _ body: @escaping () -> Void) -> UInt64 {
        let id = nextID
        nextID += 1
        // Insert after every entry due no later, so equal deadlines fire in the order set.
        let index = entries.firstIndex { $0.deadline > deadline } ?? entries.endIndex
        entries.insert(Entry(deadline: deadline, id: id, body: body), at: index)
        return id
    }

    mutating func cancel(_ id: UInt64) {
        entries.removeAll { $0.id == id }
    }

    /// epoll_wait's timeout: -1 with no timers, else the milliseconds to the next, rounded up
    /// so the loop never wakes just before a deadline and spins.
    func millisecondsUntilNext(now: UInt64) -> Int32 {
        guard let first = entries.first else { return -1 }
        guard first.deadline > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (first.deadline - now + 999_999) / 1_000_000))
    }

    /// Removes and returns the bodies of the timers due at `now`.
    mutating func popDue(now: UInt64) -> [() -> Void] {
        let due = entries.prefix { $0.deadline <= now }
        guard !due.isEmpty else { return [] }
        entries.removeFirst(due.count)
        return due.map(\.body)
    }
}
