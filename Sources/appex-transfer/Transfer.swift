import AppexTransferPlan
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One transfer with retries: a download into the partial file and then into place, or an
/// upload of the file. Redirects are followed here, not by the client: only http and https,
/// at most `plan.maxRedirects`, and the file name is always the plan's.
struct Transfer {
    let plan: TransferPlan
    let directory: ContainerDirectory
    let client: HTTPClient
    let report: Reporter
    let deadline: NIODeadline

    struct Failure: Error {
        var reason: String
        var message: String
        var status: Int = 0
        /// Worth another attempt (the connection broke, the server had a passing error).
        var retry = false
    }

    func run() async -> WorkerReport {
        if let problem = TransferPlan.fileNameProblem(plan.fileName) {
            return .done(completed: false, bytes: 0, httpStatus: 0, reason: "invalid-transfer", message: "file name \(plan.fileName) \(problem)")
        }
        var attempt = 0
        var last = Failure(reason: "network-error", message: "no attempt made")
        while attempt <= plan.retries {
            do {
                return try await (plan.kind == .download ? download() : upload())
            } catch let f as Failure {
                last = f
                if !f.retry { break }
            } catch {
                last = Failure(reason: "network-error", message: "\(error)", retry: true)
            }
            attempt += 1
            if attempt <= plan.retries {
                // 0.2 s, 0.4 s, 0.8 s … at most 5 s between attempts.
                let wait = min(0.2 * Double(1 << min(attempt - 1, 5)), 5)
                if NIODeadline.now() + .milliseconds(Int64(wait * 1000)) >= deadline {
                    last = Failure(reason: "transfer-timeout", message: "the time limit passed: \(last.message)")
                    break
                }
                try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
            }
        }
        // A failed download leaves nothing behind: nothing will resume it.
        var bytes: Int64 = 0
        let partialName = TransferPlan.partialName(of: plan.fileName)
        if plan.kind == .download, let partial = try? directory.openExisting(partialName, O_RDONLY) {
            close(partial.fd)
            bytes = partial.size
            directory.remove(partialName)
        }
        return .done(
            completed: false, bytes: bytes, httpStatus: last.status, reason: last.reason,
            message: attempt > 0 && last.retry ? "\(last.message) (after \(attempt) attempts)" : last.message)
    }

    // MARK: requests and redirects

    private func request(_ url: String, method: HTTPMethod, extra: [(String, String)], body: FileChunks?) throws -> HTTPClientRequest {
        var r = HTTPClientRequest(url: url)
        r.method = method
        for line in plan.headers {
            guard let colon = line.firstIndex(of: ":") else { continue }
            r.headers.add(name: String(line[..<colon]), value: String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        for (n, v) in extra { r.headers.replaceOrAdd(name: n, value: v) }
        if let body { r.body = .stream(body, length: .known(body.size)) }
        return r
    }

    /// The response after following redirects; its body not yet read.
    private func execute(method: HTTPMethod, extra: [(String, String)] = [], body: FileChunks? = nil) async throws -> HTTPClientResponse {
        var url = plan.url
        var hops = 0
        while true {
            let response: HTTPClientResponse
            do {
                response = try await client.execute(try request(url, method: method, extra: extra, body: body), deadline: deadline)
            } catch let e as HTTPClientError where e == .deadlineExceeded {
                throw Failure(reason: "transfer-timeout", message: "the time limit passed")
            }
            let code = Int(response.status.code)
            guard [301, 302, 303, 307, 308].contains(code), let location = response.headers.first(name: "Location") else {
                return response
            }
            hops += 1
            guard hops <= plan.maxRedirects else {
                throw Failure(reason: "bad-redirect", message: "more than \(plan.maxRedirects) redirects", status: code)
            }
            guard let next = URL(string: location, relativeTo: URL(string: url))?.absoluteURL,
                let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https", next.host != nil
            else {
                throw Failure(reason: "bad-redirect", message: "redirect to \(location): only http and https are followed", status: code)
            }
            url = next.absoluteString
        }
    }

    private func judge(_ status: Int) throws {
        if (200..<300).contains(status) { return }
        let passing = status >= 500 || status == 408 || status == 429
        throw Failure(reason: "http-status", message: "the server answered \(status)", status: status, retry: passing)
    }

    // MARK: download

    private func download() async throws -> WorkerReport {
        let partial = TransferPlan.partialName(of: plan.fileName)
        var file: (fd: Int32, size: Int64)
        do {
            if let existing = try directory.openExisting(partial, O_WRONLY) {
                file = existing
            } else {
                file = (try directory.create(partial), 0)
            }
        } catch {
            throw Failure(reason: "file-error", message: "\(error)")
        }
        defer { close(file.fd) }
        var extra: [(String, String)] = []
        if file.size > 0, let etag = plan.etag {
            extra = [("Range", "bytes=\(file.size)-"), ("If-Range", etag)]
        }
        let response = try await execute(method: .GET, extra: extra)
        let status = Int(response.status.code)
        try judge(status)
        var offset: Int64 = 0
        if status == 206, file.size > 0,
            response.headers.first(name: "Content-Range")?.hasPrefix("bytes \(file.size)-") == true
        {
            offset = file.size  // resumed
        } else if ftruncate(file.fd, 0) != 0 {
            throw Failure(reason: "file-error", message: "truncate \(partial): \(String(cString: strerror(errno)))")
        }
        if response.headers.first(name: "Accept-Ranges")?.lowercased() == "bytes", let etag = response.headers.first(name: "ETag") {
            report.send(.resumable(etag: etag))
        }
        if let length = response.headers.first(name: "Content-Length").flatMap(Int64.init), offset + length > plan.quotaBytes {
            throw Failure(reason: "transfer-quota", message: "\(offset + length) bytes would pass the quota of \(plan.quotaBytes)", status: status)
        }
        var lastReport = offset
        do {
            for try await chunk in response.body {
                if offset + Int64(chunk.readableBytes) > plan.quotaBytes {
                    throw Failure(reason: "transfer-quota", message: "the download passed the quota of \(plan.quotaBytes) bytes", status: status)
                }
                try chunk.withUnsafeReadableBytes { raw in
                    var done = 0
                    while done < raw.count {
                        let n = pwrite(file.fd, raw.baseAddress! + done, raw.count - done, off_t(offset) + off_t(done))
                        if n < 0 {
                            if errno == EINTR { continue }
                            throw Failure(reason: "file-error", message: "write \(partial): \(String(cString: strerror(errno)))")
                        }
                        done += n
                    }
                }
                offset += Int64(chunk.readableBytes)
                if offset - lastReport >= 64 * 1024 {
                    report.send(.progress(bytes: offset))
                    lastReport = offset
                }
            }
        } catch let f as Failure {
            throw f
        } catch let e as HTTPClientError where e == .deadlineExceeded {
            throw Failure(reason: "transfer-timeout", message: "the time limit passed after \(offset) bytes", status: status)
        } catch {
            throw Failure(reason: "network-error", message: "the connection broke after \(offset) bytes: \(error)", status: status, retry: true)
        }
        _ = fsync(file.fd)
        do { try directory.rename(partial, to: plan.fileName) } catch {
            throw Failure(reason: "file-error", message: "\(error)", status: status)
        }
        report.send(.progress(bytes: offset))
        return .done(completed: true, bytes: offset, httpStatus: status, reason: nil, message: "")
    }

    // MARK: upload

    private func upload() async throws -> WorkerReport {
        let opened: (fd: Int32, size: Int64)?
        do { opened = try directory.openExisting(plan.fileName, O_RDONLY) } catch {
            throw Failure(reason: "file-error", message: "\(error)")
        }
        guard let file = opened else { throw Failure(reason: "file-error", message: "no file \(plan.fileName) in the container") }
        defer { close(file.fd) }
        if file.size > plan.quotaBytes {
            throw Failure(reason: "transfer-quota", message: "\(file.size) bytes pass the quota of \(plan.quotaBytes)")
        }
        // Each attempt sends the file whole (HTTP has no standard way to resume an upload),
        // read as it goes.
        let method = HTTPMethod(rawValue: plan.method)
        let response: HTTPClientResponse
        do {
            response = try await execute(method: method, body: FileChunks(fd: file.fd, size: file.size))
        } catch let f as Failure {
            throw f
        } catch {
            throw Failure(reason: "network-error", message: "\(error)", retry: true)
        }
        let status = Int(response.status.code)
        // The answer's body is read (and dropped) so the connection ends cleanly.
        do {
            for try await _ in response.body {}
        } catch {
            throw Failure(reason: "network-error", message: "the connection broke reading the answer: \(error)", status: status, retry: true)
        }
        try judge(status)
        report.send(.progress(bytes: file.size))
        return .done(completed: true, bytes: file.size, httpStatus: status, reason: nil, message: "")
    }
}
