import AppexTestSupport
import AppexWire
import AppexWireIO
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// probe.conf in the probe's bundle directory: what it does before it checks in.
@Suite struct ProbeConfTests {
    /// A bundle directory holding `conf` as probe.conf (none when nil); removed by the caller.
    final class Bundle {
        let path: String
        init(conf: String?) throws {
            path = NSTemporaryDirectory() + "appex-probe-bundle-\(getpid())-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            if let conf { try conf.write(toFile: path + "/probe.conf", atomically: false, encoding: .utf8) }
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func withoutAConfFileItChecksInAtOnce() throws {
        let bundle = try Bundle(conf: nil)
        let probe = try Probe.start(bundlePath: bundle.path)
        #expect(Probe.text(try probe.request(1, [Probe.item("echo", text: "hi")]), 1) == "hi")
    }

    @Test func sleepBeforeCheckInDelaysTheHello() throws {
        let bundle = try Bundle(conf: "# wait a little\nsleep-before-checkin-ms=150\n")
        let start = ContinuousClock.now
        let probe = try Probe.start(bundlePath: bundle.path, checkIn: false)
        let hello = try probe.checkIn()
        #expect(ContinuousClock.now - start >= .milliseconds(150))  // a lower bound only
        #expect(hello.bundleIdentifier == Probe.identifier)
    }

    @Test func exitBeforeCheckInLeavesWithoutAHello() throws {
        let bundle = try Bundle(conf: "exit-before-checkin=9")
        let probe = try Probe.start(bundlePath: bundle.path, checkIn: false)
        try probe.expectEndOfStream()
        #expect(Termination(try probe.waitForExit()) == .exited(9))
    }

    @Test func crashBeforeCheckInDiesOfSIGSEGV() throws {
        let bundle = try Bundle(conf: "crash-before-checkin=1\n")
        let probe = try Probe.start(bundlePath: bundle.path, checkIn: false)
        try probe.expectEndOfStream()
        #expect(Termination(try probe.waitForExit()) == .signalled(SIGSEGV))
    }

    @Test func ignorePingsFromTheStart() throws {
        let bundle = try Bundle(conf: "ignore-pings=1\n")
        let probe = try Probe.start(bundlePath: bundle.path)
        try probe.connection.send(.ping(sequence: 1))
        // The answer to a later request comes first: the ping was dropped, not delayed.
        #expect(Probe.text(try probe.request(1, [Probe.item("echo", text: "served")]), 1) == "served")
    }

    @Test(arguments: [
        ("sleep-before-checkin-ms=0\n\nfrobnicate=1\n", "probe.conf:3: unknown key \"frobnicate\" (known: "),
        ("exit-before-checkin=300", "probe.conf:1: exit-before-checkin wants a whole number from 0 to 255, got \"300\""),
        ("ignore-pings=yes", "probe.conf:1: ignore-pings wants a whole number from 0 to 1, got \"yes\""),
        ("ignore-pings=1\nignore-pings=1", "probe.conf:2: key \"ignore-pings\" given twice"),
        ("sleep-before-checkin-ms = 5", "probe.conf:1: unknown key \"sleep-before-checkin-ms \""),
        ("just words", "probe.conf:1: expected key=value, got \"just words\""),
    ])
    func aBadConfFileStopsItWithStatusTwo(_ conf: String, _ says: String) throws {
        let bundle = try Bundle(conf: conf)
        let probe = try Probe.start(bundlePath: bundle.path, checkIn: false)
        try probe.expectEndOfStream()
        #expect(Termination(try probe.waitForExit()) == .exited(2))
        #expect(probe.log.contains("/probe.conf:") && probe.log.contains(says), "\(probe.log)")
    }
}
