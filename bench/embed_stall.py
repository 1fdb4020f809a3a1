#!/usr/bin/env python3
"""How long the runtime's API waits while it embeds every memory and builds
the HNSW graph (docs/memory.md "Building it"):

    python3 bench/embed_stall.py build/limbic 100000

Makes a state dir of N facts without vectors (`limbic memory import`),
starts `limbic run` on it (hash embedder, the default config), then, while
a client asks GET /v1/arousal every 10 ms, sends POST /v1/memory/embed
{"all": true} and waits until GET /metrics shows no vector waiting for the
graph (limbic_memory_graph_backlog 0). Prints how long the embed took to
answer, when the graph was built, and the probes' latency (p50, p99, max;
the max is the embed's own commit). The state dir is removed at the end."""
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

binary, n = sys.argv[1], int(sys.argv[2])
work = tempfile.mkdtemp(prefix="limbic-embed-stall-")
state = os.path.join(work, "state")
random.seed(1)
words = ["alpha", "bravo", "charlie", "delta", "echo", "fox", "golf", "hotel",
         "india", "juliet", "kilo", "lima", "mike", "nov", "oscar", "papa"]
at = "2026-11-29T09:20:12.304Z"
memories = [{"access_count": 0, "created_at": at, "id": "m-%d" % (i + 1), "importance": 0.5,
             "kind": "fact", "last_accessed_at": at, "namespace": "default",
             "object": " ".join(random.choice(words) for _ in range(4)), "relation": "likes",
             "strength": 1.0, "subject": "s%d" % i, "tags": []} for i in range(n)]
doc = json.dumps({"version": 1, "memories": memories, "associations": [], "documents": []})
subprocess.run([binary, "--state", state, "memory", "import"], input=doc.encode(), check=True,
               stdout=subprocess.DEVNULL)

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
config = os.path.join(work, "limbic.json")
with open(config, "w") as f:
    json.dump({"state_dir": state, "api": {"port": port}}, f)
run = subprocess.Popen([binary, "run", "--config", config], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
url = "http://127.0.0.1:%d" % port
for _ in range(300):
    try:
        urllib.request.urlopen(url + "/healthz", timeout=1).read()
        break
    except OSError:
        time.sleep(0.1)

latencies, stop = [], False


def probe():
    while not stop:
        t = time.time()
        urllib.request.urlopen(url + "/v1/arousal", timeout=600).read()
        latencies.append(time.time() - t)
        time.sleep(0.01)


def backlog():
    for line in urllib.request.urlopen(url + "/metrics").read().decode().splitlines():
        if line.startswith("limbic_memory_graph_backlog "):
            return float(line.split()[1])
    return 0


try:
    prober = threading.Thread(target=probe)
    prober.start()
    time.sleep(0.5)
    t0 = time.time()
    req = urllib.request.Request(url + "/v1/memory/embed", data=b'{"all": true}',
                                 headers={"Content-Type": "application/json"})
    answer = json.loads(urllib.request.urlopen(req, timeout=600).read())
    answered = time.time() - t0
    while backlog() > 0:
        time.sleep(0.2)
    built = time.time() - t0
    stop = True
    prober.join()
    ms = sorted(x * 1000 for x in latencies)
    print("%d memories: embed answered in %.1f s (%d events), graph built %.1f s after the "
          "request; %d probes meanwhile: p50 %.1f ms, p99 %.1f ms, max %.0f ms"
          % (n, answered, answer["events_written"], built, len(ms), ms[len(ms) // 2],
             ms[int(len(ms) * 0.99)], ms[-1]))
finally:
    stop = True
    run.terminate()
    run.wait()
    shutil.rmtree(work)
