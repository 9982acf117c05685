#!/usr/bin/env python3
"""Test HTTP(S) server for the cellular HTTP engine: every redirect chain the tests need.

Usage: chain_server.py --log FILE --hooks DIR [--http ADDR:PORT]... [--https ADDR:PORT --cert F --key F]
Each request is logged as one JSON line (client address and port, method, path, headers, body).
Standard library only.
"""
import argparse, json, os, socket, ssl, subprocess, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

LOG_LOCK = threading.Lock()
ARGS = None
CALLBACK = {"check_id": "chk-123", "code": "c0de-s3cret", "reference_id": "ref-42"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "chain-server"
    sys_version = ""

    def log_message(self, *a):
        pass

    def record(self, body):
        entry = {
            "client": self.client_address[0], "port": self.client_address[1],
            "method": self.command, "path": self.path, "host": self.headers.get("Host", ""),
            "cookie": self.headers.get("Cookie", ""), "ua": self.headers.get("User-Agent", ""),
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body.decode("utf-8", "replace"), "tls": isinstance(self.connection, ssl.SSLSocket),
        }
        with LOG_LOCK, open(ARGS.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def send(self, status, body=b"", headers=(), ctype="text/plain"):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, location, status=302, headers=()):
        self.send(status, b"redirecting\n", [("Location", location)] + list(headers))

    def json(self, obj, status=200):
        self.send(status, json.dumps(obj).encode(), ctype="application/json")

    def handle_any(self):
        length = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(length) if length else b""
        self.record(body)
        u = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
        p = u.path
        if p == "/chain":
            n, i = int(q.get("n", "1")), int(q.get("i", "1"))
            return self.redirect(f"/chain?n={n}&i={i + 1}") if i < n else self.json(CALLBACK)
        if p == "/final":
            return self.json(CALLBACK)
        if p == "/redirect":
            return self.redirect(q["to"])
        if p == "/dir/rel":
            return self.redirect("step2?x=1&y=a%20b")
        if p == "/dir/step2":
            return self.redirect("/final") if q.get("x") == "1" and q.get("y") == "a b" else self.send(400)
        if p == "/empty-path":
            return self.redirect("http://other.carrier.test:8080?from=empty")
        if p == "/" and q.get("from") == "empty":
            return self.redirect("http://mno.carrier.test/final")
        if p == "/cookie/set":
            return self.redirect("/cookie/check", headers=[("Set-Cookie", "sid=s3cr3t-cookie; Path=/; HttpOnly")])
        if p == "/cookie/check":
            ok = "sid=s3cr3t-cookie" in self.headers.get("Cookie", "")
            return self.redirect("/final") if ok else self.send(403, b"cookie missing\n")
        if p.startswith("/status/"):
            return self.redirect("/echo", status=int(p.rsplit("/", 1)[1]))
        if p == "/echo":
            return self.json({"method": self.command, "body": body.decode()})
        if p == "/loop":
            return self.redirect("/loop")
        if p == "/loop-a":
            return self.redirect("/loop-b")
        if p == "/loop-b":
            return self.redirect("/loop-a")
        if p == "/self-cookie":
            if "visited=1" in self.headers.get("Cookie", ""):
                return self.json(CALLBACK)
            return self.redirect("/self-cookie", headers=[("Set-Cookie", "visited=1; Path=/")])
        if p == "/downgrade":
            return self.redirect("http://mno.carrier.test/final")
        if p == "/downgrade-back":
            return self.redirect("http://mno.carrier.test/back-to-api")
        if p == "/back-to-api":
            return self.redirect("http://api.truid.test/final")
        if p == "/to-https":
            return self.redirect("https://api.truid.test/final")
        if p == "/scheme":
            return self.redirect("ftp://mno.carrier.test/file")
        if p == "/stop":
            return self.redirect("https://app.example.test/callback?check_id=chk-123&code=c0de-s3cret#frag")
        if p == "/huge":
            hs = [(f"X-Filler-{i}", "v" * 1000) for i in range(60)]
            return self.redirect("/final", headers=hs)
        if p == "/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            data = json.dumps(CALLBACK).encode()
            for k in range(0, len(data), 7):
                part = data[k:k + 7]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.flush()
                time.sleep(0.02)
            self.wfile.write(b"0\r\n\r\n")
            return
        if p == "/slow":
            time.sleep(float(q.get("s", "3")))
            return self.json(CALLBACK)
        if p == "/hook":
            script = os.path.join(ARGS.hooks, os.path.basename(q.get("name", "none")) + ".sh")
            subprocess.run(["/bin/sh", script], check=False)
            return self.redirect("/final")
        if p == "/http09":
            self.close_connection = True
            return self.wfile.write(b"no status line: this is not HTTP/1.x\n")
        if p == "/garbage-status":
            self.close_connection = True
            return self.wfile.write(b"HTTP/1.1 2x0 Fine\r\nContent-Length: 0\r\n\r\n")
        if p == "/huge-location":
            return self.redirect("/final?" + "x" * (1 << 20))
        if p == "/to-loopback":
            return self.redirect("http://127.0.0.1/final")
        if p == "/big":
            return self.send(200, b"x" * int(q.get("bytes", "100000")))
        return self.send(404, b"not found\n")

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = handle_any


class Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def serve(addr, port, context=None):
    if addr.startswith("["):
        httpd = Server6((addr.strip("[]"), port), Handler)
    else:
        httpd = ThreadingHTTPServer((addr, port), Handler)
    httpd.daemon_threads = True
    if context:
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--hooks", required=True)
    ap.add_argument("--http", action="append", default=[])
    ap.add_argument("--https", action="append", default=[])
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ARGS = ap.parse_args()
    for spec in ARGS.http:
        a, p = spec.rsplit(":", 1)
        serve(a, int(p))
    if ARGS.https:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.cert, ARGS.key)
        for spec in ARGS.https:
            a, p = spec.rsplit(":", 1)
            serve(a, int(p), ctx)
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
