"""Test harness: a real `gated serve`, the shared vectors, a recording proxy
to watch the wire in front of gated, and real faults.

gated comes from $GATED_BIN (`make sdk-python` builds it into bin/gated).
Without it the tests that need gated fail, on purpose: a skipped conformance
run would look like a passing one.
"""

import contextlib
import http.client
import json
import os
import re
import select
import socket
import subprocess
import tempfile
import threading
from pathlib import Path
from urllib.parse import quote, urlsplit

SDK_DIR = Path(__file__).resolve().parents[2]  # tests -> python -> sdk
PYTHON_DIR = SDK_DIR / "python"
TESTDATA = SDK_DIR / "testdata"
VECTORS = json.loads((TESTDATA / "vectors.json").read_text("utf-8"))
TOKENS = VECTORS["tokens"]
STARTUP_SECONDS = 30


def gated_bin() -> str:
    path = os.environ.get("GATED_BIN")
    if not path:
        raise RuntimeError(
            "GATED_BIN is not set, so there is no gated to test against. Build it and "
            "run, from the repository root: go build -o bin/gated ./cmd/gated && "
            "GATED_BIN=$PWD/bin/gated python3 -m unittest discover -s sdk/python/tests "
            "-t sdk/python (or: make sdk-python).")
    if not os.access(path, os.X_OK):
        raise RuntimeError("GATED_BIN=%s is not an executable file; build it with "
                           "go build -o bin/gated ./cmd/gated." % path)
    return path


class Gated:
    """A `gated serve` on a free loopback port, with its own audit file and spool."""

    def __init__(self, *extra_args: str):
        self._tmp = tempfile.TemporaryDirectory(prefix="gated-sdk-python-")
        args = [gated_bin(), "serve", "--addr", "127.0.0.1:0",
                "--audit-file", os.path.join(self._tmp.name, "audit.jsonl"),
                "--spool-dir", os.path.join(self._tmp.name, "spool"),
                *VECTORS["serve_args"], *extra_args]
        self.url = None
        self.log = []  # stderr lines, for failure messages
        self._ready = threading.Event()
        # cwd=testdata: serve_args' paths are relative to it.
        self.proc = subprocess.Popen(args, cwd=TESTDATA, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, errors="replace")
        # Drained for gated's whole life: a full pipe would block its logging.
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        self._ready.wait(STARTUP_SECONDS)
        if self.url is None:
            self._drainer.join(timeout=1)
            exited = not self._drainer.is_alive()  # stderr hit EOF: gated is gone
            code = self.proc.wait(timeout=5) if exited else self.proc.poll()
            self.stop()
            what = ("exited with status %s" % code if code is not None
                    else "did not log \"gated listening\" within %d s" % STARTUP_SECONDS)
            raise RuntimeError("gated %s. Command: %s\nIts stderr:\n%s"
                               % (what, " ".join(args), "".join(self.log) or "(nothing)"))

    def _drain(self) -> None:
        for line in self.proc.stderr:
            self.log.append(line)
            if self.url is None:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("msg") == "gated listening":
                    self.url = "http://" + record["addr"]
                    self._ready.set()
        self._ready.set()  # EOF: gated exited

    def kill(self) -> None:
        """SIGKILL gated: its connections drop at once, as in a crash."""
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._drainer.join(timeout=5)  # EOF follows gated's exit
        self.proc.stderr.close()
        self._tmp.cleanup()


def database_url() -> str:
    """The PostgreSQL database the approvals vectors' gated uses (gated
    migrates it): $GATED_TEST_DATABASE_URL as it is, else the vectors'
    default, a database of the SDK tests' own, created when missing so that
    gated's tables never land in a database someone else uses."""
    url = os.environ.get("GATED_TEST_DATABASE_URL")
    if url:
        return url
    url = VECTORS["approvals"]["default_database_url"]
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    out = subprocess.run(["createdb", "-h", parts.hostname, "-p", str(parts.port or 5432),
                          "-U", parts.username, name], capture_output=True, text=True)
    if out.returncode != 0 and "already exists" not in out.stderr:
        raise RuntimeError(f"createdb {name} failed: {out.stderr.strip()}")
    return url


def approvals_gated() -> Gated:
    """A gated with approvals: serve_args, the approvals section's, a database."""
    return Gated(*VECTORS["approvals"]["serve_args"], "--database-url", database_url())


def approver_call(base_url: str, method: str, path: str, body=None):
    """One plain HTTP call to gated as the approver of the approvals
    vectors; returns (status, decoded JSON answer or None)."""
    return call_as(VECTORS["approvals"]["approver_token"], base_url, method, path, body)


def call_as(token_name: str, base_url: str, method: str, path: str, body=None):
    """One plain HTTP call to gated with the vectors' token token_name;
    returns (status, decoded JSON answer or None)."""
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"Authorization": "Bearer " + TOKENS[token_name],
               "Accept": "application/json"}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, payload, headers)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    try:
        answer = json.loads(raw.decode("utf-8"))
    except ValueError:
        answer = None
    return resp.status, answer


def pending_has(base_url: str, approval_id: str) -> bool:
    """Whether approval_id is in the approver's pending list (every page)."""
    cursor = ""
    while True:
        path = "/v1/approvals?status=pending&limit=50"
        if cursor:
            path += "&cursor=" + quote(cursor, safe="")
        status, page = approver_call(base_url, "GET", path)
        if status != 200:
            raise AssertionError("GET %s answered HTTP %d: %r" % (path, status, page))
        for approval in page.get("approvals") or []:
            if approval.get("id") == approval_id:
                return approval.get("status") == "pending"
        if not page.get("next_cursor") or page["next_cursor"] == cursor:
            return False
        cursor = page["next_cursor"]


def refused_url() -> str:
    """A loopback URL nobody listens on: bind port 0, note the port, close."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return "http://127.0.0.1:%d" % port


class _Listener:
    """A loopback listener whose connections a thread hands to handle()."""

    def __init__(self):
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.settimeout(0.05)  # so the accept loop notices stop
        self.url = "http://127.0.0.1:%d" % self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._open = []
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        for conn in self._open:
            conn.close()
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except socket.timeout:
                continue
            conn.settimeout(5)
            try:
                self.handle(conn)
            except OSError:
                pass  # the client went away first: its business
            finally:
                if conn not in self._open:  # kept open on purpose otherwise
                    conn.close()

    def handle(self, conn: socket.socket) -> None:
        raise NotImplementedError


class Silent(_Listener):
    """Accepts connections and never answers."""

    def handle(self, conn):
        self._open.append(conn)


def _parse_requests(buf: bytes) -> list:
    """The complete requests in the bytes a client sent on one connection,
    as dicts of method, target, headers (lower-case) and body."""
    requests = []
    while b"\r\n\r\n" in buf:
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        if len(rest) < length:
            break
        requests.append({"method": method, "target": target,
                         "headers": headers, "body": rest[:length]})
        buf = rest[length:]
    return requests


class RecordingProxy(_Listener):
    """A recording proxy in front of the real gated at target_url.

    It relays every byte unchanged both ways and keeps a copy, so that tests
    see the request on the wire while gated itself gives the answer. The
    requests are in .requests as BrokenProxy has them; .answers holds the raw
    bytes gated answered, one entry per connection. Bytes are recorded before
    they are relayed, so both are complete once the client has its answer.
    """

    def __init__(self, target_url: str):
        super().__init__()
        parts = urlsplit(target_url)
        self._target = (parts.hostname, parts.port)
        self._sent = []
        self.answers = []

    @property
    def requests(self):
        return [r for sent in list(self._sent) for r in _parse_requests(bytes(sent))]

    def handle(self, conn):
        sent, answered = bytearray(), bytearray()
        self._sent.append(sent)
        self.answers.append(answered)
        with socket.create_connection(self._target, timeout=5) as upstream:
            peers = {conn: (upstream, sent), upstream: (conn, answered)}
            reading = [conn, upstream]
            while reading and not self._stop.is_set():
                ready, _, _ = select.select(reading, [], [], 0.05)
                for sock in ready:
                    other, record = peers[sock]
                    data = sock.recv(65536)
                    if not data:  # pass the half-close on
                        reading.remove(sock)
                        try:
                            other.shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
                        continue
                    record += data
                    other.sendall(data)


# Simulates a faulty intermediary (broken proxy, captive portal), not gated: only for answers gated never gives.
class BrokenProxy(_Listener):
    """Reads the request, answers raw bytes, then closes (or hangs, close=False).

    The requests it read are in .requests as dicts of method, target,
    headers (lower-case), body.
    """

    def __init__(self, raw: bytes, close: bool = True):
        super().__init__()
        self.raw = raw
        self.close = close
        self.requests = []

    def handle(self, conn):
        buf = b""
        while not _parse_requests(buf):
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        self.requests.append(_parse_requests(buf)[0])
        conn.sendall(self.raw)
        if not self.close:
            self._open.append(conn)
            return
        # Half-close and wait for the client to hang up, so that closing
        # never resets a connection the client is still reading.
        conn.shutdown(socket.SHUT_WR)
        while conn.recv(65536):
            pass


def http_answer(status: str, body: bytes, content_type: str = "application/json",
                extra: str = "") -> bytes:
    """A well-formed HTTP/1.1 answer, for BrokenProxy."""
    return ("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s"
            "Connection: close\r\n\r\n" % (status, content_type, len(body), extra)
            ).encode("latin-1") + body


@contextlib.contextmanager
def fault(vector: dict, gated_url: str):
    """Inject a failures vector's fault for real; yield gated.Client's
    arguments that meet it: (base_url, keyword arguments)."""
    token, kind = None, vector["fault"]
    kwargs = {"shadow": vector.get("shadow", False),
              "timeout": vector.get("timeout_ms", 2000) / 1000}
    if kind == "refused":
        yield refused_url(), dict(kwargs, token=token)
    elif kind == "token":
        yield gated_url, dict(kwargs, token=TOKENS[vector["token"]])
    elif kind in ("silent", "respond"):
        listener = (Silent() if kind == "silent"
                    else BrokenProxy(vector["respond"].encode("utf-8")))
        with listener:
            yield listener.url, dict(kwargs, token=token)
    else:
        raise AssertionError("vectors.json names a fault this SDK's tests do not "
                             "know: %r" % kind)


def slug(name):
    """A vector's name as part of a test method name."""
    return re.sub(r"\W+", "_", name.lower()).strip("_")
