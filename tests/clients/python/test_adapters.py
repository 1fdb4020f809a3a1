"""The exec adapter helpers (limbic.sensor, limbic.effector): the protocol of
docs/adapters.md by themselves, and the examples of config/examples/adapters, written on
them, run by a real `limbic run` as the C++ test `the Python adapters of docs/adapters.md`
runs them (a file becomes a percept, a reflex notifies once).
"""

import io
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PACKAGE, REPO, Limbic, TempDir, limbic, wait_until  # noqa: E402

EXAMPLES = os.path.join(REPO, "config", "examples", "adapters")


def run_python(code, stdin="", env=None):
    full = dict(os.environ, PYTHONPATH=PACKAGE)
    full.pop("LIMBIC_IDEMPOTENCY_KEY", None)
    full.update(env or {})
    return subprocess.run(["/usr/bin/python3", "-c", code], input=stdin, capture_output=True,
                          text=True, env=full, timeout=30)


class Sensor(unittest.TestCase):

    def test_emit_writes_one_flushed_line_and_refuses_unknown_keys(self):
        out = io.StringIO()
        limbic.sensor.emit({"source": "s", "type": "t", "text": "é"}, out)
        self.assertEqual(out.getvalue(), '{"source":"s","type":"t","text":"é"}\n')
        with self.assertRaises(ValueError):
            limbic.sensor.emit({"source": "s", "type": "t", "colour": "red"}, out)

    def test_run_emits_what_the_generator_yields_and_exits_0(self):
        r = run_python("from limbic import sensor\n"
                       "sensor.run(lambda: iter([{'source': 'a', 'type': 'b'}, {'id': 'x', 'source': 'a', 'type': 'c'}]))")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([json.loads(l) for l in r.stdout.splitlines()],
                         [{"source": "a", "type": "b"}, {"id": "x", "source": "a", "type": "c"}])

    def test_a_closed_stdout_ends_it_quietly(self):
        p = subprocess.Popen(["/usr/bin/python3", "-c",
                              "from limbic import sensor\n"
                              "def forever():\n"
                              "    while True: yield {'source': 'a', 'type': 'b', 'text': 'x' * 1000}\n"
                              "sensor.run(forever)"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, PYTHONPATH=PACKAGE))
        p.stdout.readline()
        p.stdout.close()
        self.assertEqual(p.wait(30), 0)
        self.assertEqual(p.stderr.read(), b"")
        p.stderr.close()


class Effector(unittest.TestCase):
    HANDLER = ("import json, sys\nfrom limbic import effector\n"
               "def handle(action):\n"
               "    how = action.payload.get('how')\n"
               "    if how == 'retry': raise effector.Retry('later')\n"
               "    if how == 'fail': raise effector.Fail('never')\n"
               "    if how == 'crash': raise RuntimeError('a bug')\n"
               "    return {'key': action.key, 'id': action.id, 'attempt': action.attempt,\n"
               "            'thread': action.thread_id, 'payload': action.payload}\n"
               "effector.run(handle, name='test')\n")
    ENV = {"LIMBIC_IDEMPOTENCY_KEY": "k-1", "LIMBIC_ACTION_ID": "a-1", "LIMBIC_ACTION_TYPE": "t",
           "LIMBIC_ATTEMPT": "2", "LIMBIC_THREAD_ID": ""}

    def test_complete_prints_the_result(self):
        r = run_python(self.HANDLER, '{"x": 1}\n', self.ENV)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), {"key": "k-1", "id": "a-1", "attempt": 2,
                                                "thread": None, "payload": {"x": 1}})

    def test_outcomes_by_exit_status(self):
        for payload, status in (('{"how": "retry"}', 75), ('{"how": "fail"}', 65),
                                ('{"how": "crash"}', 75), ("[1, 2]", 65), ("not json", 65)):
            with self.subTest(payload):
                r = run_python(self.HANDLER, payload + "\n", self.ENV)
                self.assertEqual(r.returncode, status, r.stderr)
                self.assertTrue(r.stderr.startswith("test: "), r.stderr)
        r = run_python(self.HANDLER, "{}\n", {})  # not run by limbic
        self.assertEqual(r.returncode, 64)


class TheExamples(unittest.TestCase):
    """config/examples/adapters, as the C++ test runs them (tests/integration/sensors_test.cc)."""

    def test_a_file_becomes_a_percept_and_a_reflex_notifies_once(self):
        d = TempDir()
        self.addCleanup(d.cleanup)
        with open(os.path.join(EXAMPLES, "limbic.json")) as f:
            config = json.loads(f.read().replace("/tmp/limbic-example", d.path))
        with open(os.path.join(EXAMPLES, "reflexes.json")) as f:
            reflexes = f.read().replace("/tmp/limbic-example", d.path)
        config["api"]["port"] = 0
        for script in ("dir_watch_sensor.py", "notify_effector.py"):  # ${CONFIG_DIR}
            os.symlink(os.path.join(EXAMPLES, script), d / script)
        with open(d / "reflexes.json", "w") as f:
            f.write(reflexes)
        os.mkdir(d / "inbox")
        rt = Limbic(d.path, config)
        self.addCleanup(rt.kill)
        self.assertIsNotNone(rt.wait_for_log("dir_watch: watching " + d / "inbox"))

        with open(d / "inbox/.report.txt.tmp", "w") as f:
            f.write("quarterly numbers\n")
        os.rename(d / "inbox/.report.txt.tmp", d / "inbox/report.txt")
        c = limbic.Client(rt.url)
        self.addCleanup(c.close)
        p = wait_until(lambda: c.list_percepts(source="dir_watch")["percepts"], what="the percept")[0]
        self.assertEqual((p["type"], p["text"], p["data"]["size"]),
                         ("file.created", "new file report.txt", 18))
        self.assertTrue(p["id"].startswith("file-"))
        action = wait_until(lambda: c.list_actions(status="complete")["actions"],
                            what="the notification")[0]
        self.assertEqual(action["effector"], "notify")
        self.assertIn('"appended": true', action["result"]["stdout"])
        with open(d / "notifications.jsonl") as f:
            notes = [json.loads(line) for line in f]
        self.assertEqual(len(notes), 1)
        self.assertEqual((notes[0]["key"], notes[0]["action"]),
                         (action["idempotency_key"], action["id"]))
        self.assertEqual(notes[0]["payload"], {"text": "new file report.txt", "file": "report.txt",
                                               "size": 18, "percept": p["id"]})
        rt.stop()
        self.assertEqual(rt.proc.returncode, 0)


if __name__ == "__main__":
    unittest.main()
