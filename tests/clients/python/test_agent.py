"""clients/python/examples/agent.py against a real `limbic run` and a scripted
OpenAI-compatible model on loopback: it waits for a percept, reads the context, asks the
model, and acts through the client (a thread, an action with the model's text, the
percept processed).
"""

import http.server
import json
import os
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PACKAGE, Limbic, TempDir, limbic, wait_until  # noqa: E402

AGENT = os.path.join(PACKAGE, "examples", "agent.py")
REPLY = "The report goes out on Friday."


class Model:
    """POST /v1/chat/completions answers REPLY; the requests are kept."""

    def __init__(self):
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, dict(self.headers), body))
                data = json.dumps({"id": "c-1", "object": "chat.completion", "model": body["model"],
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": REPLY}}],
                                   "usage": {"prompt_tokens": 10, "completion_tokens": 7}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class ExampleAgent(unittest.TestCase):

    def test_it_answers_a_percept_through_the_model(self):
        d = TempDir()
        self.addCleanup(d.cleanup)
        rt = Limbic(d.path, {"state_dir": d / "state", "api": {"port": 0, "token": "agent-token"},
                             "effectors": {"reply": {"kind": "file", "path": d / "replies.jsonl"}}})
        self.addCleanup(rt.kill)
        model = Model()
        self.addCleanup(model.close)
        env = dict(os.environ, PYTHONPATH=PACKAGE, LIMBIC_URL=rt.url, LIMBIC_API_TOKEN="agent-token",
                   OPENAI_BASE_URL=model.url, OPENAI_MODEL="scripted")
        agent = subprocess.Popen(["/usr/bin/python3", AGENT, "--once"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: agent.poll() is None and agent.kill())
        c = limbic.Client(rt.url, token="agent-token")
        self.addCleanup(c.close)
        # The agent is waiting (a long-poll) when the percept arrives.
        self.assertTrue(agent.stdout.readline().startswith("waiting for percepts"))
        pid = c.add_percept(source="chat", type="message", intensity=0.9,
                            text="When does the quarterly report go out?")["id"]
        out, err = agent.communicate(timeout=60)
        self.assertEqual(agent.returncode, 0, err)
        self.assertIn("acted on thread", out)

        self.assertEqual(len(model.requests), 1)
        path, headers, body = model.requests[0]
        self.assertEqual(path, "/v1/chat/completions")
        self.assertEqual(body["model"], "scripted")
        self.assertIn("quarterly report", body["messages"][1]["content"])  # the context
        thread = c.list_threads()["threads"][0]
        self.assertIn("quarterly report", thread["goal"])
        action = c.list_actions()["actions"][0]
        self.assertEqual((action["effector"], action["type"], action["payload"], action["thread_id"]),
                         ("reply", "reply", {"text": REPLY}, thread["id"]))
        self.assertEqual(c.get_percept(pid)["status"], "processed")
        self.assertEqual(c.get_percept(pid)["thread_id"], thread["id"])
        wait_until(lambda: c.get_action(action["id"])["status"] == "complete", what="delivery")


if __name__ == "__main__":
    unittest.main()
