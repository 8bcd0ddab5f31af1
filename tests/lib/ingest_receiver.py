#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for Grafana Pyroscope's ingest API, for the tests of perf-agent --push.

  ingest_receiver.py --dir DIR [--port N] [--port-file F] [--status CODE] [--delay S]

Serves POST /ingest on 127.0.0.1 (anything else: 404).  A good request has name,
from and until (integers) and format=pprof in its query, and a multipart/form-data
body with a part named "profile".  Answered 200 (or --status CODE), after --delay
seconds.  What lands in DIR:

  NNNN.pb.gz     the profile part of the Nth accepted upload (answered 2xx)
  uploads.jsonl  one line per accepted upload: {"n", "name", "from", "until",
                 "tenant", "authorization", "bytes", "file"}
  refused.jsonl  one line per good request answered --status CODE (not 2xx): the
                 same fields but "file", and "status"
  errors.log     one line per malformed request (answered 400)
  receiver.log   the access log

Restarted on the same DIR, it numbers on from the uploads already there; on the same
--port, it binds again at once (SO_REUSEADDR).  Python 3 standard library only.
"""
import argparse
import email.parser
import email.policy
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse


class Receiver(http.server.ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.n = count_lines(os.path.join(args.dir, "uploads.jsonl"))
        super().__init__(("127.0.0.1", args.port), Handler)

    def append(self, name, text):
        with self.lock, open(os.path.join(self.args.dir, name), "a") as f:
            f.write(text + "\n")

    def accept(self, rec, profile):
        """Number and store an accepted upload."""
        with self.lock:
            self.n += 1
            rec = dict(n=self.n, **rec)
            rec["file"] = "%04d.pb.gz" % self.n
            path = os.path.join(self.args.dir, rec["file"])
            with open(path + ".tmp", "wb") as f:
                f.write(profile)
            os.rename(path + ".tmp", path)
            # The line last: a test that sees it finds the file.
            with open(os.path.join(self.args.dir, "uploads.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")


def count_lines(path):
    try:
        with open(path) as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


class BadRequest(Exception):
    pass


def check_query(query):
    """The fields of an ingest query, or BadRequest saying what is wrong."""
    try:
        q = urllib.parse.parse_qs(query, keep_blank_values=True, strict_parsing=True)
    except ValueError as e:
        raise BadRequest("bad query string: %s" % e)
    for key in ("name", "from", "until", "format"):
        if len(q.get(key, [])) != 1:
            raise BadRequest("query needs exactly one %s= (has %d)" % (key, len(q.get(key, []))))
    if not q["name"][0]:
        raise BadRequest("name= is empty")
    if q["format"][0] != "pprof":
        raise BadRequest("format=%s, not pprof" % q["format"][0])
    try:
        start, end = int(q["from"][0]), int(q["until"][0])
    except ValueError:
        raise BadRequest("from= and until= must be integers")
    return {"name": q["name"][0], "from": start, "until": end}


def multipart_parts(ctype, body):
    """(headers, content) of each part, split on the boundary byte for byte."""
    msg = email.parser.HeaderParser(policy=email.policy.HTTP).parsestr(
        "Content-Type: %s\r\n\r\n" % ctype)
    if msg.get_content_type() != "multipart/form-data":
        raise BadRequest("Content-Type is %s, not multipart/form-data" % msg.get_content_type())
    boundary = msg.get_param("boundary")
    if not boundary:
        raise BadRequest("multipart/form-data without a boundary")
    delim = b"--" + boundary.encode("latin-1")
    chunks = (b"\r\n" + body).split(b"\r\n" + delim)
    if len(chunks) < 3 or not chunks[-1].startswith(b"--"):
        raise BadRequest("multipart body not closed by its boundary")
    parts = []
    for chunk in chunks[1:-1]:
        head, sep, content = chunk.partition(b"\r\n\r\n")
        if not sep:
            raise BadRequest("a multipart part without headers")
        headers = email.parser.BytesHeaderParser(policy=email.policy.HTTP).parsebytes(
            head.lstrip(b" \t").split(b"\r\n", 1)[-1] + b"\r\n\r\n")
        parts.append((headers, content))
    return parts


def find_profile(ctype, body):
    for headers, content in multipart_parts(ctype, body):
        if headers.get_param("name", header="content-disposition") == "profile":
            return content
    raise BadRequest("no multipart part named profile")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as Pyroscope
    server_version = "ingest_receiver"

    def log_message(self, fmt, *args):
        self.server.append("receiver.log", "%s %s" % (self.address_string(), fmt % args))

    def answer(self, code, text):
        data = (text + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def not_found(self):
        self.answer(404, "404 page not found")

    do_GET = do_PUT = do_DELETE = do_HEAD = do_PATCH = not_found

    def read_body(self):
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise BadRequest("no Content-Length")
        return self.rfile.read(int(length))

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/ingest":
            return self.not_found()
        try:
            body = self.read_body()
            rec = check_query(url.query)
            profile = find_profile(self.headers.get("Content-Type", ""), body)
        except BadRequest as e:
            self.server.append("errors.log", "%s: %s" % (self.path, e))
            self.close_connection = True
            return self.answer(400, "bad request: %s" % e)
        rec["tenant"] = self.headers.get("X-Scope-OrgID")
        rec["authorization"] = self.headers.get("Authorization")
        rec["bytes"] = len(profile)
        if self.server.args.delay:
            time.sleep(self.server.args.delay)
        status = self.server.args.status
        if 200 <= status < 300:
            self.server.accept(rec, profile)
            return self.answer(status, "ok")
        rec["status"] = status
        self.server.append("refused.jsonl", json.dumps(rec))
        self.answer(status, "%d %s (ingest_receiver --status)" %
                    (status, self.responses.get(status, ("",))[0]))


def write_port(path, port):
    with open(path + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(path + ".tmp", path)  # a reader never sees it half-written


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="where uploads are stored")
    ap.add_argument("--port", type=int, default=0, help="0: a free one (see --port-file)")
    ap.add_argument("--port-file", help="write the port here once listening")
    ap.add_argument("--status", type=int, default=200, help="the answer to a good request")
    ap.add_argument("--delay", type=float, default=0, help="seconds before answering")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    server = Receiver(args)
    if args.port_file:
        write_port(args.port_file, server.server_address[1])
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
