#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Minimal HTTP(S) server for test_fetch.sh: serves files from --root under /<mode>/<name>
and logs every request (one JSON line: method, path, range) to --log.

Modes:
  ok          honours Range (206 + Content-Range, 416 past the end)
  norange     ignores Range: always 200 with the whole file
  badrange    answers a Range with 206 whose Content-Range starts at 0
  trunc       first request per name: announces the full length, sends half, closes;
              later requests behave like ok
  stall       first request per name: sends half, then nothing for 60 s; later like ok
  flaky       first request per name: 503 with Retry-After: 30; later like ok
  flood       200 without Content-Length, then zeros until the client goes away
  bigcl       200 with Content-Length: 10^12, then zeros until the client goes away
  status/N    always answers HTTP N
  redirect    302 to /ok/<name> (or to --redirect-base + /ok/<name> when given)
"""
import argparse
import json
import os
import re
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE_LOCK = threading.Lock()
SEEN = {}  # (mode, name) -> number of requests


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet; requests go to the JSON log
        pass

    def log_request_json(self):
        entry = {"method": self.command, "path": self.path,
                 "range": self.headers.get("Range"),
                 "user_agent": self.headers.get("User-Agent")}
        with STATE_LOCK:
            with open(self.server.log_path, "a") as log:
                log.write(json.dumps(entry) + "\n")

    def count(self, mode, name):
        with STATE_LOCK:
            SEEN[(mode, name)] = SEEN.get((mode, name), 0) + 1
            return SEEN[(mode, name)]

    def send_plain(self, code, body=b"", headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def stream_zeros(self):
        chunk = b"\0" * 65536
        try:
            while True:
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass
        self.close_connection = True

    def do_GET(self):
        self.log_request_json()
        parts = self.path.lstrip("/").split("/")
        mode = parts[0]
        if mode == "status" and len(parts) >= 3:
            self.send_plain(int(parts[1]), b"status page\n")
            return
        name = "/".join(parts[1:])
        path = os.path.join(self.server.root, name)
        if mode == "redirect":
            target = self.server.redirect_base + "/ok/" + name
            self.send_plain(302, b"", [("Location", target)])
            return
        if mode == "flood":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.stream_zeros()
            return
        if mode == "bigcl":
            self.send_response(200)
            self.send_header("Content-Length", str(10 ** 12))
            self.end_headers()
            self.stream_zeros()
            return
        if not os.path.isfile(path):
            self.send_plain(404, b"not found\n")
            return
        with open(path, "rb") as f:
            data = f.read()
        n = self.count(mode, name)
        if mode == "flaky" and n == 1:
            self.send_plain(503, b"busy\n", [("Retry-After", "30")])
            return
        rng = self.headers.get("Range")
        start = 0
        if rng and mode != "norange":
            m = re.fullmatch(r"bytes=(\d+)-", rng.strip())
            if m:
                start = int(m.group(1))
        if start >= len(data) and start > 0:
            self.send_plain(416, b"", [("Content-Range", "bytes */%d" % len(data))])
            return
        if start > 0 and mode == "badrange":
            self.send_response(206)
            self.send_header("Content-Range", "bytes 0-%d/%d" % (len(data) - 1, len(data)))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        body = data[start:]
        self.send_response(206 if start > 0 else 200)
        if start > 0:
            self.send_header("Content-Range",
                             "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if mode == "stall" and n == 1:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            time.sleep(60)  # the client's low-speed limit must end this
            self.close_connection = True
            return
        if mode == "trunc" and n == 1:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.wfile.write(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--redirect-base", default="")
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.root = args.root
    server.log_path = args.log
    scheme = "http"
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    port = server.server_address[1]
    server.redirect_base = args.redirect_base or "%s://127.0.0.1:%d" % (scheme, port)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(port))
    os.rename(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
