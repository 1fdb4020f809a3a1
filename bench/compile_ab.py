#!/usr/bin/env python3
"""Compile time of sample translation units: the build's flags against the
old ones (`-g` instead of `-g1`, no precompiled header), one compile at a
time, alternating, each twice. Run from the repository root after a build:

    python3 bench/compile_ab.py state/reduce.cc runtime/runtime.cc ...

Prints each file's mean wall time under both and the total ratio
(bench/NOTES.md, "build time")."""
import json
import re
import subprocess
import sys
import time

def main(files):
    commands = json.load(open('build/compile_commands.json'))
    old_total = new_total = 0.0
    for name in files:
        entry = next(e for e in commands if e['file'].endswith('/' + name))
        new = re.sub(r' -o \S+', ' -o /dev/null', entry['command'])
        old = re.sub(r' -include \S+cmake_pch\.hxx', '', new.replace(' -g1 ', ' -g '))
        old = old.replace(' -Winvalid-pch', '')
        took = {'old': 0.0, 'new': 0.0}
        for which, cmd in (('old', old), ('new', new)) * 2:
            start = time.time()
            subprocess.run(cmd, shell=True, cwd=entry['directory'], check=True)
            took[which] += (time.time() - start) / 2
        old_total += took['old']
        new_total += took['new']
        print(f"{name:40s} old {took['old']:6.2f} s  new {took['new']:6.2f} s  "
              f"{took['new'] / took['old']:.2f}", flush=True)
    print(f"total old {old_total:.1f} s  new {new_total:.1f} s  ratio {new_total / old_total:.2f}")

if __name__ == '__main__':
    main(sys.argv[1:])
