import AppexHostClient
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What crosses an extension's channel at its edges, through the real appexd and the probe
/// extension: an answer written just before exit, answers after Terminate, the extension's
/// own pings and refusal, several open-URLs in one request (Docs/protocol.md, section 6).
@Suite(.serialized) struct ExtensionChannelTests {
    typealias Daemon = DaemonTests.Daemon

    func withDaemon(_ body: (Daemon) async throws -> Void) async throws {
        try RequiresRoot.check("appexd needs root")
        let d = try Daemon(tag: "channel-tests")
        defer { d.cleanUp() }
        try d.start()
        try await body(d)
    }

    /// The probe installed and enabled, and a host connected (its open-URL handler `openURL`).
    func withProbe(
        openURL: @escaping HostClient.OpenURLHandler = HostClient.refuseEveryURL,
        _ body: (Daemon, String, HostClient) async throws -> Void
    ) async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            let host = try HostClient.connect(socketPath: d.socket, identifier: "tests.channel", openURL: openURL)
            defer { host.close() }
            try await body(d, id, host)
        }
    }

    static func action(_ name: String, _ arg: String? = nil) -> [ExtensionItem] {
        var info: [String: UserInfoValue] = ["probe.action": .string(name)]
        if let arg { info["probe.arg"] = .string(arg) }
        return [ExtensionItem(userInfo: info)]
    }

    /// This appexd's termination record of `id` (`appex kills --json`), once written: the
    /// history is written off the loop, a moment after the outcome.
    static func record(_ d: Daemon, _ id: String) async throws -> [String: Any]? {
        for _ in 0..<100 {
            let k = try d.appex(["kills", id, "--json", "--state-dir", d.root + "/state"], socket: false)
            #expect(k.status == 0, "\(k.err)")
            let records = try #require(try JSONSerialization.jsonObject(with: Data(k.out.utf8)) as? [[String: Any]], "\(k.out)")
            if let first = records.first { return first }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// The extension's CompleteRequest is on the socket when its pidfd says it has exited; the
    /// loop may see the exit first. The answer still counts, every time.
    @Test func anAnswerWrittenJustBeforeExitCounts() async throws {
        try await withProbe { d, id, host in
            for n in 0..<20 {
                let o = try await host.beginRequest(bundleIdentifier: id, items: Self.action("answer-and-exit", "0"))
                #expect(o.outcome == .completed, "request \(n): \(o.reason.map(\.rawValue) ?? "") \(o.error?.message ?? "")")
                #expect(o.items.first?.attributedContentText == "answered, exiting")
            }
        }
    }

    /// Terminate's grace is for the request in flight: the probe answers it (CancelRequest,
    /// "terminating") and the host gets that answer, not a failure with the Terminate's reason.
    @Test func aRequestInFlightIsAnsweredAfterTerminate() async throws {
        try await withProbe { d, id, host in
            let request = Task { try await host.beginRequest(bundleIdentifier: id, items: Self.action("sleep", "20000")) }
            // The probe logs each request it begins: then the request is in flight there.
            let log = d.root + "/state/logs/\(id).log"
            let until = Date().addingTimeInterval(30)
            while Date() < until, !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("request 1: sleep 20000") {
                try await Task.sleep(for: .milliseconds(20))
            }
            _ = try await host.disable(id)
            let o = try await request.value
            #expect(o.outcome == .cancelled, "\(o.outcome) \(o.reason.map(\.rawValue) ?? "") \(o.error?.message ?? "")")
            #expect(o.error?.domain == "dev.appex.probe" && o.error?.message == "terminating", "\(String(describing: o.error))")
            let record = try #require(try await Self.record(d, id))
            #expect(record["reason"] as? String == "disabled", "\(record)")
        }
    }

    /// appexd answers an extension's pings, as either end answers the other's (within the
    /// allowance hosts have too: a burst of 32, then 16 a second).
    @Test func appexdAnswersTheExtensionsPings() async throws {
        try await withProbe { d, id, host in
            for _ in 0..<2 {
                let o = try await host.beginRequest(bundleIdentifier: id, items: Self.action("ping-appexd", "16"))
                #expect(o.outcome == .completed, "\(o.reason.map(\.rawValue) ?? "") \(o.error?.message ?? "")")
                #expect(o.items.first?.attributedContentText == "pongs=16")
            }
        }
    }

    /// An extension that refuses the connection is recorded with `protocol-error` and its own
    /// words, not as a crash.
    @Test func theExtensionsRefusalIsRecorded() async throws {
        try await withProbe { d, id, host in
            let o = try await host.beginRequest(bundleIdentifier: id, items: Self.action("refuse"))
            #expect(o.outcome == .failed && o.reason == .protocolError, "\(o.outcome) \(o.reason.map(\.rawValue) ?? "")")
            let record = try #require(try await Self.record(d, id))
            #expect(record["reason"] as? String == "protocol-error")
            #expect((record["message"] as? String ?? "").contains("refused on instruction"), "\(record)")
        }
    }

    /// Three open-URLs in one request, the host deciding each: every one gets its own result,
    /// in order.
    @Test func severalOpenURLsInOneRequest() async throws {
        // The slowest decision first: results still go back in the order asked.
        try await withProbe(openURL: { _, url in
            if url.hasSuffix("/a") { try? await Task.sleep(for: .milliseconds(200)) }
            return !url.hasSuffix("/b")
        }) { _, id, host in
            let o = try await host.beginRequest(
                bundleIdentifier: id,
                items: Self.action("open-url", "https://example.org/a https://example.org/b https://example.org/c"))
            #expect(o.outcome == .completed, "\(o.reason.map(\.rawValue) ?? "") \(o.error?.message ?? "")")
            #expect(o.items.first?.attributedContentText == "accepted,refused,accepted")
        }
    }
}
