"""Every operation of the document, called once through the Python client on a real
`limbic run`, with and without api.token; and an error of each class (400, 401, 404, 409,
413, 503) raised as the LimbicError subclass for its status.

    LIMBIC_BINARY=build/limbic /usr/bin/python3 -m unittest discover -s tests/clients/python
"""

import datetime
import json
import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Limbic, TempDir, limbic, wait_until  # noqa: E402

TOKEN = "py-client-token"


class Recording(limbic.Client):
    """A Client that notes each operation it sends."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.called = set()

    def _call(self, op, *args, **kwargs):
        self.called.add(op)
        return super()._call(op, *args, **kwargs)

    def events(self, *args, **kwargs):
        self.called.add("event_stream")
        return super().events(*args, **kwargs)


def contract_config(d, token):
    """The runtime of tests/browser/api_contract.test.mjs: a webhook sensor, a file
    effector, ingest roots, and an exec mind that takes one step and stays awake."""
    os.makedirs(d / "docs")
    with open(d / "docs/notes.md", "w") as f:
        f.write("# Notes\n\nThe deploy runbook lives with ops.\n")
    with open(d / "reflexes.json", "w") as f:
        json.dump({"reflexes": []}, f)
    with open(d / "mind.py", "w") as f:
        f.write("import json, sys, time\nsys.stdin.read()\n"
                'print(json.dumps({"text": "thinking", "tokens_in": 4, "tokens_out": 2}), '
                "flush=True)\ntime.sleep(60)\n")
    config = {
        "state_dir": d / "state",
        "reflexes": d / "reflexes.json",
        "api": {"port": 0},
        "memory": {"ingest_roots": [d / "docs"]},
        "sensors": {"hooks": {"kind": "webhook", "source": "/app", "type": "alert",
                              "text": "/msg", "intensity": 0.7, "data": ""}},
        "effectors": {"out": {"kind": "file", "path": d / "out.jsonl"}},
        "mind": {"enabled": True, "kind": "exec", "command": ["/usr/bin/python3", d / "mind.py"],
                 "wake": {"threshold": 1, "focused_thread": False},
                 "budget": {"max_session": "60s"}},
    }
    if token:
        config["api"]["token"] = token
    return config


class EveryOperation:
    """Mixed into a TestCase with TOKEN set (or None)."""

    TOKEN = None

    @classmethod
    def setUpClass(cls):
        cls.dir = TempDir()
        cls.limbic = Limbic(cls.dir.path, contract_config(cls.dir, cls.TOKEN))

    @classmethod
    def tearDownClass(cls):
        cls.limbic.kill()
        cls.dir.cleanup()

    def client(self, **kwargs):
        kwargs.setdefault("token", self.TOKEN)
        c = Recording(self.limbic.url, **kwargs)
        self.addCleanup(c.close)
        return c

    def test_every_operation_once(self):
        c = self.client()
        d = self.dir
        self.assertEqual(c.health()["status"], "ok")
        self.assertIn("limbic_", c.metrics())
        doc = c.openapi()
        self.assertEqual(doc["openapi"], "3.1.0")
        with self.assertRaises(limbic.Conflict):
            c.promote()  # a primary is not a standby

        # Percepts and threads.
        p1 = c.add_percept(source="ops", type="message", text="deploy the runbook")["id"]
        p2 = c.add_percept(source="ops", type="message", text="noise")["id"]
        p3 = c.add_percept(source="ops", type="message", text="more noise")["id"]
        self.assertEqual(len(c.list_percepts(source="ops", limit=10)["percepts"]), 3)
        self.assertEqual(c.get_percept(p1)["text"], "deploy the runbook")
        t1 = c.create_thread(goal="ship the release")["id"]
        c.assign_percept(p1, thread_id=t1)
        c.process_percept(p1, reason="read")
        c.drop_percept(p2)
        c.remove_percept(p3)
        self.assertEqual(c.get_percept(p1)["status"], "processed")
        self.assertEqual([t["id"] for t in c.list_threads(status="all")["threads"]], [t1])
        self.assertEqual(c.get_thread(t1)["goal"], "ship the release")
        c.update_thread(t1, salience=0.9, state={"phase": "doing"})
        self.assertIn("unassigned", c.attention())
        c.get_arousal()
        c.set_arousal(level=0.4)
        self.assertEqual(c.put_arousal(level=0.5)["events"][0]["type"], "arousal_set")

        # The outbox.
        a1 = c.enqueue_action(effector="out", type="note", payload={"x": 1})["id"]
        a2 = c.enqueue_action(effector="out", type="note", require_approval=True)["id"]
        a3 = c.enqueue_action(effector="out", type="note", require_approval=True)["id"]
        c.approve_action(a2)
        c.reject_action(a3, reason="no")
        with self.assertRaises(limbic.Conflict):
            c.retry_action(a1)  # only a dead action
        self.assertEqual(len(c.list_actions()["actions"]), 3)
        self.assertEqual(c.get_action(a1)["effector"], "out")
        c.prune_actions(older_than="1d")
        self.assertIn("digest", c.state_digest())

        # Events, reflexes, sensors.
        self.assertEqual(c.why(p1)["id"], p1)
        self.assertEqual(c.events_since(after=0, limit=5)["events"][0]["seq"], 1)
        stream = c.event_stream(after=0)
        self.assertEqual(next(stream)["seq"], 1)
        stream.close()
        c.list_reflexes()
        rule = {"when": {"source": "chat", "pattern": "(?i)urgent"},
                "then": [{"escalate": {"arousal": 0.9}}]}
        self.assertTrue(c.put_reflex("r1", body=rule, dry_run=True)["valid"])
        c.put_reflex("r1", body=rule)
        self.assertEqual(c.get_reflex("r1")["id"], "r1")
        c.disable_reflex("r1")
        c.enable_reflex("r1")
        c.delete_reflex("r1")
        c.sensor_webhook("hooks", body={"app": "grafana", "msg": "disk full"})

        # Memory.
        fact = c.remember_fact(subject="alice", relation="works_at", object="acme")
        c.remember_episode(text="met alice at the conference")
        self.assertTrue(c.recall(query="alice")["results"])
        c.relate(entity_a="alice", relation="manages", entity_b="bob")
        c.related(entity="alice")
        self.assertGreaterEqual(c.memory_stats()["facts"], 1)
        self.assertEqual(c.get_memory(fact["id"])["subject"], "alice")
        c.embed()
        exported = c.export_memory()
        c.import_memory(body=exported)
        c.ingest(path=d / "docs")
        c.context(query="alice", budget_tokens=500)
        c.forget(id=fact["id"])
        c.decay(force=True)

        # The world model.
        today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        c.world_extract(date=today, text="# Log\n\nAlice from Acme met Bob about Project Apollo.\n")
        c.world_memory()
        names = [e["name"] for e in c.world_entities()["entities"]] + ["Alice", "Bob"]
        for call in (lambda: c.world_entity(name=names[0]),
                     lambda: c.world_neighbors(name=names[0]),
                     lambda: c.world_path(from_=names[0], to=names[1])):
            try:
                call()
            except limbic.NotFound:
                pass
        c.world_surprise()
        c.world_consolidate()

        # The archive.
        c.archive_blink(text="remember the runbook")
        c.consolidate()
        c.archive_rollup()
        self.assertIn("ok", c.archive_verify())
        c.archive_search(q="runbook")
        c.archive_stats()
        c.archive_recall(k=3)
        for call in (lambda: c.archive_day(today), lambda: c.archive_walk(today)):
            try:
                call()
            except limbic.NotFound:
                pass  # today is still staged

        # The mind.
        c.get_mind()
        session = c.wake_mind(reason="the client test")["session"]
        with self.assertRaises(limbic.Conflict):
            c.wake_mind()  # one session at a time
        wait_until(lambda: c.get_mind_session(session).get("steps"), what="the mind's step")
        c.list_mind_sessions(limit=5)
        self.assertEqual(c.sleep_mind()["outcome"], "slept")
        with self.assertRaises(limbic.Conflict):
            c.sleep_mind()  # asleep
        with self.assertRaises(limbic.NotFound):
            c.get_mind_session("m-0")

        # Time travel, forks, the inspector.
        self.assertEqual(c.state_at(seq=1, limit=5)["seq"], 1)
        self.assertTrue(c.fork(at_seq=1, into="py-fork")["into"].endswith("py-fork"))
        self.assertIn(b"<html", c.ui())  # /ui answers 308 to /ui/: followed
        self.assertTrue(c.ui_file_1("app.js"))
        self.assertTrue(c.ui_file_2("views", "now.js"))
        with self.assertRaises(limbic.NotFound):
            c.ui_file_3("a", "b", "c")
        with self.assertRaises(limbic.NotFound):
            c.ui_file_4("a", "b", "c", "d")
        c.delete_thread(t1)

        # The batch: each item answered alone.
        r = c.add_percepts(percepts=[{"id": "b-1", "source": "bulk", "type": "x"},
                                     {"id": "b-1", "source": "bulk", "type": "x"},
                                     {"id": "b-2", "source": "bulk", "type": "x"}])
        self.assertEqual((r["accepted"], r["refused"]), (2, 1))
        self.assertEqual(r["results"][1]["status"], 409)
        self.assertEqual(r["results"][2]["id"], "b-2")

        missing = set(limbic.OPERATIONS) - c.called
        self.assertFalse(missing, f"operations not called: {sorted(missing)}")

    def test_an_error_of_each_class(self):
        c = self.client(retries=0)
        with self.assertRaises(limbic.BadRequest) as e:
            c.add_percept(source="chat", type="message", intensity=1.7)
        self.assertEqual((e.exception.status, e.exception.code), (400, "invalid_argument"))
        self.assertIn("intensity", e.exception.message)
        with self.assertRaises(limbic.BadRequest):
            c.add_percept(source="chat", type="message", colour="red")  # an unknown key
        with self.assertRaises(limbic.NotFound) as e:
            c.get_thread("t-none")
        self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))
        c.add_percept(source="chat", type="message", id="dup-1")
        with self.assertRaises(limbic.Conflict) as e:
            c.add_percept(source="chat", type="message", id="dup-1")
        self.assertEqual((e.exception.status, e.exception.code, e.exception.attempts),
                         (409, "already_exists", 1))
        with self.assertRaises(limbic.PayloadTooLarge) as e:
            c.add_percept(source="chat", type="message", text="x" * (1 << 20))
        self.assertEqual((e.exception.status, e.exception.code), (413, "payload_too_large"))
        with self.assertRaises(limbic.PayloadTooLarge) as e:  # past api.batch_limit (1000)
            c.add_percepts(percepts=[{"source": "bulk", "type": "x"}] * 1001)
        self.assertEqual((e.exception.status, e.exception.code), (413, "batch_too_large"))
        # Every error is a LimbicError, with the server's message.
        with self.assertRaises(limbic.LimbicError) as e:
            c.get_percept("p-none")
        self.assertIn("p-none", str(e.exception))

    def test_the_token(self):
        c = self.client(token="wrong" if self.TOKEN else None)
        if self.TOKEN:
            with self.assertRaises(limbic.Unauthorized) as e:
                c.list_percepts()
            self.assertEqual(e.exception.status, 401)
            with self.assertRaises(limbic.Unauthorized):
                next(c.events(after=0))
            self.assertEqual(c.openapi()["info"]["title"], "limbic")  # public
        else:
            self.assertIn("percepts", c.list_percepts())

    def test_token_and_url_from_the_environment(self):
        saved = {k: os.environ.get(k) for k in ("LIMBIC_URL", "LIMBIC_API_TOKEN")}
        try:
            os.environ["LIMBIC_URL"] = self.limbic.url
            if self.TOKEN:
                os.environ["LIMBIC_API_TOKEN"] = self.TOKEN
            c = limbic.Client()
            self.assertEqual(c.url, self.limbic.url)
            self.assertIn("percepts", c.list_percepts(limit=1))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_the_url_from_the_state_dirs_api_json(self):
        saved = os.environ.pop("LIMBIC_URL", None)
        try:
            c = limbic.Client(state=self.limbic.config["state_dir"], token=self.TOKEN)
            self.assertEqual(c.url, self.limbic.url)
            self.assertEqual(c.health()["status"], "ok")
            # Nothing running there: the default URL.
            self.assertEqual(limbic.Client(state=self.dir / "nothing").url, limbic.DEFAULT_URL)
        finally:
            if saved is not None:
                os.environ["LIMBIC_URL"] = saved


class WithoutToken(EveryOperation, unittest.TestCase):
    TOKEN = None


class WithToken(EveryOperation, unittest.TestCase):
    TOKEN = TOKEN


class Unavailable(unittest.TestCase):
    """503: the runtime holds api.max_sse_streams streams (one, held from another address
    so that the per-client limit, a 429, is not the one reached)."""

    def test_503_when_the_streams_are_taken(self):
        d = TempDir()
        self.addCleanup(d.cleanup)
        rt = Limbic(d.path, {"state_dir": d / "state",
                             "api": {"port": 0, "max_sse_streams": 1,
                                     "max_sse_streams_per_client": 1}})
        self.addCleanup(rt.kill)
        c = limbic.Client(rt.url, retries=0)
        self.addCleanup(c.close)
        c.add_percept(source="chat", type="message")
        held = socket.create_connection(("127.0.0.1", rt.port), source_address=("127.0.0.2", 0))
        self.addCleanup(held.close)
        held.sendall(b"GET /v1/events/stream?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        held.settimeout(20)
        got = b""
        while b"percept_arrived" not in got:  # the one stream, serving
            chunk = held.recv(4096)
            self.assertTrue(chunk, got)
            got += chunk
        with self.assertRaises(limbic.Unavailable) as e:
            next(c.events(after=0, reconnect=False))
        self.assertEqual((e.exception.status, e.exception.code), (503, "unavailable"))
        self.assertEqual(e.exception.retry_after, 1)
        self.assertNotIsInstance(e.exception, limbic.TransportError)
        # Retried (Retry-After: 1) while the stream is held, then raised with the attempts.
        start = time.monotonic()
        with self.assertRaises(limbic.Unavailable) as e:
            next(limbic.Client(rt.url, retries=1).events(after=0, give_up_after=0.5))
        self.assertGreaterEqual(time.monotonic() - start, 0.9)
        held.close()
        stream = c.events(after=0)
        self.assertEqual(next(stream)["seq"], 1)  # free again
        stream.close()
        # A transport error is an Unavailable too, with status 0.
        rt.stop()
        with self.assertRaises(limbic.TransportError) as e:
            c.health()
        self.assertEqual((e.exception.status, e.exception.code), (0, "unavailable"))


if __name__ == "__main__":
    unittest.main()
