import AppexTransferPlan
import AppexWire
import Testing

@testable import AppexSupervisor

/// What appexd refuses of an extension's ScheduleTransfer before anything is stored or
/// started, and the plan it hands the worker (Docs/transfers.md).
@Suite struct TransferRequestCheckTests {
    static func schedule(
        url: String = "https://example.org/a", group: String = "group.a", file: String = "a.bin",
        kind: TransferKind = .download, method: String? = nil, headers: [String] = [],
        session: String = "s"
    ) -> ScheduleTransfer {
        ScheduleTransfer(
            requestID: 1, token: 1, sessionIdentifier: session,
            transfer: TransferRequest(kind: kind, url: url, appGroup: group, fileName: file, method: method, headers: headers))
    }

    static func problem(_ s: ScheduleTransfer) -> String? { TransferRequestCheck.problem(s, appGroups: ["group.a"]) }

    @Test func anOrdinaryDownloadAndUploadPass() {
        #expect(Self.problem(Self.schedule()) == nil)
        #expect(
            Self.problem(
                Self.schedule(
                    url: "http://127.0.0.1:8080/x?y=1", kind: .upload, method: "POST",
                    headers: ["Content-Type: text/plain", "X-Id: 7"])) == nil)
    }

    @Test(arguments: ["../x", "a/b", "..", ".", "", "a\u{0}b", "a\nb", ".a.bin.appex-partial", String(repeating: "x", count: 256)])
    func fileNamesThatAreNotOnePlainComponentAreRefused(_ name: String) {
        #expect(Self.problem(Self.schedule(file: name))?.hasPrefix("file name") == true, "\(name)")
    }

    @Test(arguments: [
        "file:///etc/passwd", "ftp://h/x", "http+unix://%2Frun%2Fappexd.sock/", "https://", "http:///x",
        "http://h/a b", "http://h/\r\nX: y", "//h/x", "h/x",
    ])
    func urlsThatAreNotPlainHTTPAreRefused(_ url: String) {
        #expect(Self.problem(Self.schedule(url: url))?.hasPrefix("url") == true, "\(url)")
    }

    @Test func headersMethodsGroupsAndSessionsAreChecked() {
        #expect(Self.problem(Self.schedule(headers: ["X: a\r\nHost: evil"]))?.contains("line break") == true)
        #expect(Self.problem(Self.schedule(headers: ["Host: evil"]))?.contains("set by appexd") == true)
        #expect(Self.problem(Self.schedule(headers: ["Range: bytes=0-"]))?.contains("set by appexd") == true)
        #expect(Self.problem(Self.schedule(headers: ["no colon"])) != nil)
        #expect(Self.problem(Self.schedule(headers: ["Bad Name: x"]))?.contains("token") == true)
        #expect(Self.problem(Self.schedule(method: "POST"))?.contains("a download is a GET") == true)
        #expect(Self.problem(Self.schedule(kind: .upload, method: "PO ST"))?.contains("method") == true)
        #expect(Self.problem(Self.schedule(group: "group.b"))?.contains("app group group.b") == true)
        #expect(Self.problem(Self.schedule(session: ""))?.hasPrefix("session identifier") == true)
        #expect(Self.problem(Self.schedule(session: "a\u{7}b"))?.hasPrefix("session identifier") == true)
    }

    @Test func aPlanRoundTripsAndAWorkerReportParses() throws {
        let plan = TransferPlan(
            kind: .upload, url: "https://h/x?a=b c", method: "PUT", headers: ["A: b", "C: d e"], fileName: "n.txt",
            quotaBytes: 1 << 20, timeLimitSeconds: 30, etag: "\"v1\"")
        #expect(try TransferPlan(decoding: plan.encoded) == plan)
        #expect(throws: TransferPlanError.self) { try TransferPlan(decoding: "kind upload\n") }
        let done = WorkerReport.done(completed: false, bytes: 12, httpStatus: 503, reason: "http-status", message: "the server\nanswered 503")
        #expect(
            WorkerReport(line: Substring(done.line.dropLast()))
                == .done(completed: false, bytes: 12, httpStatus: 503, reason: "http-status", message: "the server answered 503"))
        #expect(WorkerReport(line: "progress 65536") == .progress(bytes: 65536))
        #expect(WorkerReport(line: "resumable \"abc def\"") == .resumable(etag: "\"abc def\""))
        #expect(WorkerReport(line: "progress x") == nil && WorkerReport(line: "hello") == nil)
    }
}
