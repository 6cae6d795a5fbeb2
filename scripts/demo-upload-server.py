#!/usr/bin/env python3
# The receiving end of `make demo`'s background upload (Docs/transfers.md): an HTTP server on
# loopback that takes a PUT, holds it for DELAY seconds (long enough for the Share extension to
# finish its request and exit), stores the body in DIR and answers 201. Writes its port to
# DIR/port once it listens.
import http.server, os, sys, time
directory, delay = sys.argv[1], float(sys.argv[2])
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        time.sleep(delay)
        with open(os.path.join(directory, os.path.basename(self.path)), "wb") as f:
            f.write(body)
        print("upload-server: received %s (%d bytes)" % (self.path, len(body)), flush=True)
        self.send_response(201); self.send_header("Content-Length", "0"); self.end_headers()
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(directory, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(directory, "port.tmp"), os.path.join(directory, "port"))
server.serve_forever()
