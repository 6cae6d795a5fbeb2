/// The loop's pending timers, soonest first: a binary min-heap on (deadline, id), so equal
/// deadlines fire in the order they were set. A supervisor holds a few timers per live
/// instance (deadline, ping, pong, request timeout, idle exit, aging): thousands with 1,000
/// idle extensions, where a sorted array paid a linear insert and cancel on every ping.
///
/// Cancelling only forgets the id; the entry leaves the heap when it reaches the top, or when
/// cancelled entries outnumber live ones and the heap is rebuilt, so memory stays within
/// twice the live timers however far ahead the cancelled ones were due.
struct TimerQueue {
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
        var body: () -> Void

        func before(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : id < other.id
        }
    }

    private var heap: [Entry] = []
    private var live: Set<UInt64> = []
    private var nextID: UInt64 = 1

    /// Live timers.
    var count: Int { live.count }
    /// Entries held, cancelled ones not yet dropped included.
    var storedEntries: Int { heap.count }

    mutating func add(at deadline: UInt64, _ body: @escaping () -> Void) -> UInt64 {
        let id = nextID
        nextID += 1
        live.insert(id)
        heap.append(Entry(deadline: deadline, id: id, body: body))
        siftUp(heap.count - 1)
        return id
    }

    mutating func cancel(_ id: UInt64) {
        guard live.remove(id) != nil else { return }
        if heap.count > 64 && heap.count > 2 * live.count { rebuild() }
    }

    /// epoll_wait's timeout: -1 with no timers, else the milliseconds to the next, rounded up
    /// so the loop never wakes just before a deadline and spins.
    mutating func millisecondsUntilNext(now: UInt64) -> Int32 {
        dropCancelledTop()
        guard let first = heap.first else { return -1 }
        guard first.deadline > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (first.deadline - now + 999_999) / 1_000_000))
    }

    /// Removes and returns the soonest timer due at `now`, if any. One at a time: a timer's
    /// body may cancel another that is due in the same pass, and that one must not run.
    mutating func popDue(now: UInt64) -> (() -> Void)? {
        dropCancelledTop()
        guard let first = heap.first, first.deadline <= now else { return nil }
        removeTop()
        live.remove(first.id)
        return first.body
    }

    private mutating func dropCancelledTop() {
        while let first = heap.first, !live.contains(first.id) { removeTop() }
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func rebuild() {
        heap.removeAll { !live.contains($0.id) }
        var i = heap.count / 2
        while i > 0 {
            i -= 1
            siftDown(i)
        }
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].before(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].before(heap[smallest]) { smallest = left }
            if right < heap.count && heap[right].before(heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
