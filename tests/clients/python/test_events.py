"""Client.events() across restarts of the runtime: the iterator connects again and resumes
after the last seq it yielded, with no gap and no repeat, whether the runtime stopped
cleanly (SIGTERM) or crashed (SIGKILL), on the same port (a URL given) or on a new one
(the URL found again in the state dir's api.json).
"""

import os
import queue
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Limbic, TempDir, limbic, wait_until  # noqa: E402


class Reader:
    """Reads an events() iterator on a thread of its own into `seen`."""

    def __init__(self, iterator):
        self.seen = []
        self.errors = queue.Queue()
        self._it = iterator
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        try:
            for event in self._it:
                self.seen.append(event)
        except Exception as e:  # noqa: BLE001 -- reported to the test
            self.errors.put(e)

    def percepts(self):
        return [e["percept_id"] for e in self.seen if e["type"] == "percept_arrived"]

    def wait_for_percepts(self, ids, timeout_s=30):
        wait_until(lambda: self.errors.empty() and set(ids) <= set(self.percepts())
                   or not self.errors.empty(), timeout_s, f"percepts {ids} on the stream")
        if not self.errors.empty():
            raise self.errors.get()


class EventsAcrossRestarts(unittest.TestCase):

    def setUp(self):
        self.dir = TempDir()
        self.addCleanup(self.dir.cleanup)
        self.state = self.dir / "state"

    def start(self, port=0):
        rt = Limbic(self.dir.path, {"state_dir": self.state, "api": {"port": port}})
        self.addCleanup(rt.kill)
        return rt

    def add(self, url, first, count):
        c = limbic.Client(url)
        ids = [f"n-{i}" for i in range(first, first + count)]
        for pid in ids:
            c.add_percept(id=pid, source="test", type="note", text=pid)
        c.close()
        return ids

    def check_no_gap_no_repeat(self, reader, url):
        """Every event of the log, in order, each once: as GET /v1/events lists them."""
        seqs = [e["seq"] for e in reader.seen]
        self.assertEqual(seqs, sorted(set(seqs)), "a repeat or a reordering")
        c = limbic.Client(url)
        logged = c.events_since(after=0, limit=10000)["events"]
        c.close()
        self.assertEqual(seqs, [e["seq"] for e in logged[:len(seqs)]], "a gap")
        self.assertEqual(seqs, list(range(1, len(seqs) + 1)))

    def test_a_clean_restart_on_the_same_port(self):
        rt = self.start()
        ids = self.add(rt.url, 1, 3)
        client = limbic.Client(rt.url, backoff=0.05, max_backoff=0.5)
        reader = Reader(client.events(after=0, give_up_after=60))
        reader.wait_for_percepts(ids)
        rt.stop()
        rt = self.start(rt.port)
        ids += self.add(rt.url, 4, 3)  # written while the stream was down: the backlog
        reader.wait_for_percepts(ids)
        ids += self.add(rt.url, 7, 2)  # live
        reader.wait_for_percepts(ids)
        self.assertEqual(reader.percepts(), ids)
        self.check_no_gap_no_repeat(reader, rt.url)
        rt.stop()

    def test_a_crash_and_a_new_port_found_in_api_json(self):
        rt = self.start()
        ids = self.add(rt.url, 1, 2)
        client = limbic.Client(state=self.state, backoff=0.05, max_backoff=0.5)
        self.assertEqual(client.url, rt.url)
        reader = Reader(client.events(types=["percept_arrived"], give_up_after=60))
        reader.wait_for_percepts(ids)
        for round_ in range(2):
            rt.kill()  # no clean stop: the stream just ends, api.json stays behind (stale)
            rt = self.start()
            ids += self.add(rt.url, 3 + 2 * round_, 2)
            reader.wait_for_percepts(ids)
        self.assertEqual(client.url, rt.url)  # followed to the new port
        self.assertEqual(reader.percepts(), ids)
        seqs = [e["seq"] for e in reader.seen]
        self.assertEqual(seqs, sorted(set(seqs)))
        rt.stop()

    def test_resume_after_a_seq(self):
        rt = self.start()
        self.add(rt.url, 1, 4)
        c = limbic.Client(rt.url)
        events = c.events_since(after=0, type="percept_arrived")["events"]
        after = events[1]["seq"]  # n-2's
        stream = c.events(after=after, types="percept_arrived")
        self.assertEqual([next(stream)["percept_id"] for _ in range(2)], ["n-3", "n-4"])
        stream.close()
        live = c.events(after="now", types="percept_arrived")
        self.add(rt.url, 5, 1)
        self.assertEqual(next(live)["percept_id"], "n-5")  # none of the four before
        live.close()
        c.close()
        rt.stop()


if __name__ == "__main__":
    unittest.main()
