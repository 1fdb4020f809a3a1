"""The client's transport against a scripted server on loopback: which failures are retried
(reads and writes with an id; any request that was never sent; 429; a 503 that did
nothing), which are not (a 4xx, a write without an id that got no answer, a 503 "outcome
unknown"), timeouts, headers, and the event stream's parsing. No runtime needed.
"""

import http.server
import json
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import limbic  # noqa: E402


class Scripted:
    """An HTTP server answering each request with the next step of `script` (the last
    repeats): (status, body-dict), "drop" (close without an answer) or ("slow", seconds)."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_one(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append((self.command, self.path, dict(self.headers), body))
                step = outer.script[min(len(outer.requests) - 1, len(outer.script) - 1)]
                if step == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if isinstance(step, tuple) and step[0] == "slow":
                    time.sleep(step[1])
                    step = (200, {"ok": True})
                status, doc = step
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status in (429, 503):
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda *_: None  # a client that gave up: expected here
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def err(code, message):
    return {"error": {"code": code, "message": message}}


class Retries(unittest.TestCase):

    def serve(self, *script):
        s = Scripted(script)
        self.addCleanup(s.close)
        c = limbic.Client(s.url, token="tok", actor="tester", retries=3, backoff=0.01,
                          timeout=2)
        self.addCleanup(c.close)
        return s, c

    def test_a_read_is_retried_on_503_and_429(self):
        s, c = self.serve((503, err("unavailable", "busy")), (429, err("too_many_connections", "x")),
                          (200, {"percepts": []}))
        self.assertEqual(c.list_percepts(limit=5), {"percepts": []})
        self.assertEqual(len(s.requests), 3)
        method, path, headers, _ = s.requests[0]
        self.assertEqual((method, path), ("GET", "/v1/percepts?limit=5"))
        self.assertEqual(headers["Authorization"], "Bearer tok")
        self.assertEqual(headers["X-Limbic-Actor"], "tester")

    def test_retries_run_out(self):
        s, c = self.serve((503, err("unavailable", "shutting down")))
        with self.assertRaises(limbic.Unavailable) as e:
            c.attention()
        self.assertEqual((e.exception.attempts, len(s.requests)), (4, 4))

    def test_a_4xx_is_never_retried(self):
        s, c = self.serve((400, err("invalid_argument", "bad")), (200, {}))
        with self.assertRaises(limbic.BadRequest):
            c.get_thread("t-1")
        self.assertEqual(len(s.requests), 1)

    def test_a_write_without_an_id_is_not_sent_twice_after_no_answer(self):
        s, c = self.serve("drop", (201, {"id": "p-1", "seq": 1, "events": []}))
        with self.assertRaises(limbic.TransportError) as e:
            c.add_percept(source="chat", type="message")
        self.assertEqual((e.exception.status, e.exception.code), (0, "unavailable"))
        self.assertEqual(len(s.requests), 1)

    def test_a_write_with_an_id_or_key_is_retried(self):
        s, c = self.serve("drop", (201, {"id": "chat-1", "seq": 1, "events": []}))
        self.assertEqual(c.add_percept(source="chat", type="message", id="chat-1")["id"], "chat-1")
        self.assertEqual(len(s.requests), 2)
        s, c = self.serve("drop", (201, {"id": "a-1", "seq": 1, "events": []}))
        c.enqueue_action(effector="out", type="note", idempotency_key="k-1")
        self.assertEqual(len(s.requests), 2)
        self.assertEqual(json.loads(s.requests[1][3])["idempotency_key"], "k-1")

    def test_a_batch_is_retried_only_when_every_percept_has_an_id(self):
        ok = (200, {"results": [], "accepted": 0, "refused": 0})
        s, c = self.serve("drop", ok)
        c.add_percepts(percepts=[{"id": "a", "source": "s", "type": "t"},
                                 {"id": "b", "source": "s", "type": "t"}])
        self.assertEqual(len(s.requests), 2)
        self.assertEqual(s.requests[1][1], "/v1/percepts/batch")
        s, c = self.serve("drop", ok)
        with self.assertRaises(limbic.TransportError):
            c.add_percepts(percepts=[{"id": "a", "source": "s", "type": "t"},
                                     {"source": "s", "type": "t"}])
        self.assertEqual(len(s.requests), 1)

    def test_a_503_that_did_nothing_is_retried_for_any_write(self):
        s, c = self.serve((503, err("unavailable", "not written: the disk is full")),
                          (201, {"id": "p-1", "seq": 1, "events": []}))
        c.add_percept(source="chat", type="message")
        self.assertEqual(len(s.requests), 2)
        s, c = self.serve((503, err("unavailable", "outcome unknown: the sync failed")),
                          (201, {"id": "p-1", "seq": 1, "events": []}))
        with self.assertRaises(limbic.Unavailable) as e:
            c.add_percept(source="chat", type="message")
        self.assertTrue(e.exception.message.startswith("outcome unknown"))
        self.assertEqual(len(s.requests), 1)

    def test_a_timeout(self):
        s, c = self.serve(("slow", 3))
        c.retries = 0
        start = time.monotonic()
        with self.assertRaises(limbic.TransportError):
            c.get_arousal()
        self.assertLess(time.monotonic() - start, 2.9)

    def test_a_long_poll_waits_longer_than_the_timeout(self):
        s, c = self.serve(("slow", 2.5))
        self.assertEqual(c.events_since(after=0, wait=2), {"ok": True})
        self.assertIn("wait=2", s.requests[0][1])

    def test_nothing_listening(self):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        c = limbic.Client(f"http://127.0.0.1:{port}", retries=2, backoff=0.01)
        with self.assertRaises(limbic.TransportError) as e:
            c.add_percept(source="chat", type="message")  # never sent: retried all the same
        self.assertEqual(e.exception.attempts, 3)
        self.assertIn(f"127.0.0.1:{port}", e.exception.message)

    def test_bodies_and_queries(self):
        s, c = self.serve((200, {}))
        c.process_percept("p/1")  # no fields: no body
        c.events_since(type=["a", "b"], after=3)
        c.put_reflex("r1", body={"when": {}}, dry_run=True)
        c.world_path(from_="A B", to="C")
        c.add_percept(source="s", type="t", data={"k": "é"}, colour="red")  # extra fields pass
        paths = [r[1] for r in s.requests]
        self.assertEqual(paths[:4], ["/v1/percepts/p%2F1/process", "/v1/events?after=3&type=a%2Cb",
                                     "/v1/reflexes/r1?dry_run=true",
                                     "/v1/world/graph/path?from=A+B&to=C"])
        self.assertEqual(s.requests[0][3], b"")
        self.assertNotIn("Content-Type", s.requests[0][2])
        self.assertEqual(json.loads(s.requests[2][3]), {"when": {}})
        self.assertEqual(json.loads(s.requests[4][3].decode()),
                         {"source": "s", "type": "t", "data": {"k": "é"}, "colour": "red"})
        self.assertEqual(s.requests[4][2]["Content-Type"], "application/json")


class SseParsing(unittest.TestCase):

    def test_comments_multiline_data_and_no_repeat(self):
        class Resp:
            def __init__(self, text):
                self.lines = [l.encode() for l in text.splitlines(keepends=True)]

            def readline(self):
                return self.lines.pop(0) if self.lines else b""

        stream = (": keepalive\n\n"
                  "id: 1\nevent: a\ndata: {\"seq\": 1,\ndata: \"type\": \"a\"}\n\n"
                  "id: 2\r\nevent: b\r\ndata: {\"seq\": 2, \"type\": \"b\"}\r\n\r\n"
                  "data: not json\n\n")
        got = list(limbic.client._read_sse(Resp(stream)))
        self.assertEqual([seq for seq, _ in got], [1, 2])
        self.assertEqual(got[1][1]["type"], "b")


if __name__ == "__main__":
    unittest.main()
