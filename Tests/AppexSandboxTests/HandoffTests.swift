import Testing

@testable import AppexSandbox

#if canImport(Glibc)
import Glibc
#endif

/// The one-shot value `ExtensionRun.prepare` passes to its sandbox-build thread.
@Suite struct HandoffTests {
    struct Failed: Error, Equatable { var code: Int }

    @Test func aWaiterGetsTheValueDeliveredLaterOnAnotherThread() throws {
        let handoff = Handoff<Int>()
        let waiter = BackgroundStep.start { try handoff.wait() }
        usleep(20_000)  // the waiter is (most likely) blocked by now; either order must work
        handoff.deliver(42)
        #expect(try waiter.join() == 42)
        // Settled once: later deliveries and failures change nothing.
        handoff.deliver(7)
        handoff.fail(Failed(code: 1))
        #expect(try handoff.wait() == 42)
    }

    @Test func aFailureReachesTheWaiter() throws {
        let handoff = Handoff<Void>()
        let waiter = BackgroundStep<Void>.start { try handoff.wait() }
        handoff.fail(Failed(code: 3))
        #expect(throws: Failed(code: 3)) { try waiter.join() }
        handoff.deliver(())
        #expect(throws: Failed(code: 3)) { try handoff.wait() }
    }
}
