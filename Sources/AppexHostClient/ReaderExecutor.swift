import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs a task that prefers it on the connection's reader thread, at the moment its answer
/// arrives there, instead of waking a thread of the cooperative pool to run it. A host that
/// waits for one answer after another then costs what a blocking `recv` costs: the thread the
/// kernel wakes for the answer is the one that goes on with the task, as the floor's host
/// does (Docs/performance.md).
///
/// Only jobs enqueued by the reader thread itself, while it hands out what it read, run there;
/// a job enqueued from any other thread (a task entering the preference, one resumed by
/// another task) goes to the global concurrent executor. While such a task runs, the reader
/// does not read: it must not block, and long work belongs elsewhere.
final class ReaderExecutor: TaskExecutor, @unchecked Sendable {
    /// The reader thread, once it has said so (0 before).
    private let readerThread = Atomic<UInt>(0)
    /// Jobs to run once the current frame is handled, and whether the reader collects them
    /// now. Only the reader thread touches either (the thread check comes first).
    private var collected: [UnownedJob] = []
    private var collecting = false

    /// Called on the reader thread before it reads anything.
    func adoptCurrentThread() {
        readerThread.store(UInt(pthread_self()), ordering: .releasing)
    }

    var isReaderThread: Bool {
        readerThread.load(ordering: .acquiring) == UInt(pthread_self())
    }

    func enqueue(_ job: consuming ExecutorJob) {
        if isReaderThread, collecting {
            collected.append(UnownedJob(job))
        } else {
            globalConcurrentExecutor.enqueue(job)
        }
    }

    /// On the reader thread: runs `body` (which may resume tasks that prefer this executor),
    /// then those tasks, and any they enqueue in turn, until none is left.
    func collectAndRun(_ body: () -> Void) {
        collecting = true
        body()
        while !collected.isEmpty {
            let job = collected.removeFirst()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
        collecting = false
    }
}
