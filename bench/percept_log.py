#!/usr/bin/env python3
"""Writes N percept_arrived events as a limbic log, for timing replay:

    python3 bench/percept_log.py 300000 percepts-300k.jsonl
    build/limbic replay --from percepts-300k.jsonl --into /tmp/replayed

Ids p-1..p-N, five sources, a text and a small data object, ts 7 ms apart;
keys in the order limbic writes them (docs/events.md)."""
import random
import sys
import time

n, path = int(sys.argv[1]), sys.argv[2]
random.seed(1)
base_ms = 1795000000000
sources = ["github", "chat", "mail", "cal", "ci"]
with open(path, "w") as out:
    for i in range(1, n + 1):
        t = base_ms + i * 7
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t // 1000)) + ".%03dZ" % (t % 1000)
        out.write('{"v":1,"seq":%d,"ts":"%s","type":"percept_arrived",'
                  '"data":{"n":%d,"url":"https://example.com/x/%d"},"intensity":%r,'
                  '"percept_id":"p-%d","percept_type":"issues.opened","source":"%s",'
                  '"text":"crash on start number %d"}\n'
                  % (i, ts, i, i, round(random.random(), 3), i, sources[i % 5], i))
