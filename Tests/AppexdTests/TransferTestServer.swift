import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP server on loopback for the background-transfer tests: Python's http.server
/// with a handler of ours, started and SIGKILLed by the test. Paths:
///
/// - `GET /blob/<bytes>?delay=<ms>&chunk=<bytes>`: deterministic bytes, `chunk` at a time
///   with `delay` between (a slow download), `Accept-Ranges` and an `ETag`, `Range` honoured;
/// - `GET /redirect?to=<url>`: 302 to `to`;
/// - `PUT|POST /upload/<name>?drop=<n>`: the first `n` attempts of that name lose the
///   connection before any answer; later ones store the body (`uploads/<name>`) and get 201;
/// - every request line, with its Range header, goes to `requests.log`.
final class TransferTestServer: @unchecked Sendable {
    let directory: String
    let process: Process
    let port: Int

    static let script = #"""
        import http.server, os, socketserver, sys, time, urllib.parse
        root = sys.argv[1]
        def pattern(n, start=0):
            return bytes(((i * 7 + 3) % 251) for i in range(start, start + n))
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def note(self):
                with open(os.path.join(root, "requests.log"), "a") as f:
                    f.write("%s %s range=%s\n" % (self.command, self.path, self.headers.get("Range", "-")))
            def do_GET(self):
                self.note()
                u = urllib.parse.urlparse(self.path); q = urllib.parse.parse_qs(u.query)
                if u.path.startswith("/blob/"):
                    size = int(u.path[6:]); delay = int(q.get("delay", ["0"])[0]) / 1000.0
                    chunk = int(q.get("chunk", ["65536"])[0]); start = 0
                    r = self.headers.get("Range")
                    if r and r.startswith("bytes=") and self.headers.get("If-Range", '"v1"') == '"v1"':
                        start = int(r[6:].split("-")[0])
                        self.send_response(206); self.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size))
                    else:
                        self.send_response(200)
                    self.send_header("Content-Length", str(size - start)); self.send_header("Accept-Ranges", "bytes")
                    self.send_header("ETag", '"v1"'); self.end_headers()
                    pos = start
                    try:
                        while pos < size:
                            n = min(chunk, size - pos); self.wfile.write(pattern(n, pos)); self.wfile.flush(); pos += n
                            if pos < size: time.sleep(delay)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                elif u.path == "/redirect":
                    self.send_response(302); self.send_header("Location", q["to"][0]); self.send_header("Content-Length", "0"); self.end_headers()
                else:
                    self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
            def do_PUT(self):
                self.note()
                u = urllib.parse.urlparse(self.path); q = urllib.parse.parse_qs(u.query)
                name = os.path.basename(u.path); drop = int(q.get("drop", ["0"])[0])
                count_file = os.path.join(root, "attempts-" + name)
                attempts = int(open(count_file).read()) if os.path.exists(count_file) else 0
                open(count_file, "w").write(str(attempts + 1))
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if attempts < drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                os.makedirs(os.path.join(root, "uploads"), exist_ok=True)
                open(os.path.join(root, "uploads", name), "wb").write(body)
                self.send_response(201); self.send_header("Content-Length", "0"); self.end_headers()
            do_POST = do_PUT
        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
        s = Server(("127.0.0.1", 0), Handler)
        open(os.path.join(root, "port.tmp"), "w").write(str(s.server_address[1]))
        os.rename(os.path.join(root, "port.tmp"), os.path.join(root, "port"))
        s.serve_forever()
        """#

    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(Self.script.utf8).write(to: URL(fileURLWithPath: directory + "/server.py"))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [directory + "/server.py", directory]
        try p.run()
        process = p
        var port = 0
        for _ in 0..<500 {
            if let s = try? String(contentsOfFile: directory + "/port", encoding: .utf8), let n = Int(s) {
                port = n
                break
            }
            usleep(10_000)
        }
        if port == 0 {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            throw POSIXError(.ETIMEDOUT)
        }
        self.port = port
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// The bytes `GET /blob/<size>` serves.
    static func blob(_ size: Int) -> [UInt8] { (0..<size).map { UInt8(($0 * 7 + 3) % 251) } }

    var requestLog: String { (try? String(contentsOfFile: directory + "/requests.log", encoding: .utf8)) ?? "" }

    func uploaded(_ name: String) -> Data? { FileManager.default.contents(atPath: directory + "/uploads/" + name) }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
