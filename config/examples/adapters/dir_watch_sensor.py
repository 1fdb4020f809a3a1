#!/usr/bin/env python3
"""A limbic exec sensor: one percept for each new file in a directory.

    dir_watch_sensor.py DIRECTORY [--interval SECONDS] [--include-existing]

Written on the Python client's sensor helper (clients/python, limbic.sensor), which
speaks the adapter protocol (docs/adapters.md): each percept yielded is printed as one
JSON line on stdout and flushed; SIGTERM and a closed stdout end the program quietly.
Diagnostics go to stderr, which limbic copies into its log. If this program exits,
limbic starts it again after `restart_backoff`, doubling up to `max_backoff`.

A file is new when its name appears in DIRECTORY (or reappears with another
inode). Files whose names start with "." are ignored, so a writer can create
".name.tmp" and rename it when complete. Each percept's id is derived from
the file's path, inode and mtime: when a restart with --include-existing
reports a file again, limbic refuses the duplicate id and records nothing.
"""

import argparse
import hashlib
import os
import sys
import time

# The repository's client beside this example, else an installed `limbic` package.
_CLIENT = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..",
                       "clients", "python")
if os.path.isdir(os.path.join(_CLIENT, "limbic")):
    sys.path.insert(0, _CLIENT)
from limbic import sensor  # noqa: E402


def log(message):
    sensor.log(message, "dir_watch")


def percept_for(path, st):
    name = os.path.basename(path)
    digest = hashlib.sha256(f"{path}\0{st.st_ino}\0{st.st_mtime_ns}".encode()).hexdigest()
    return {
        "id": "file-" + digest[:24],
        "source": "dir_watch",
        "type": "file.created",
        "intensity": 0.4,
        "text": f"new file {name}",
        "data": {"name": name, "path": path, "size": st.st_size},
    }


def scan(directory):
    """{path: stat} of the regular, non-hidden files; None if unreadable."""
    files = {}
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_file(follow_symlinks=False):
                        files[entry.path] = entry.stat(follow_symlinks=False)
                except OSError:
                    continue  # removed between listing and stat
    except OSError as e:
        log(f"cannot read {directory}: {e.strerror}")
        return None
    return files


def watch(directory, interval, include_existing):
    """Yields a percept for each new file, scanning every `interval` seconds."""
    seen = {}  # path -> inode
    if not include_existing:
        seen = {path: st.st_ino for path, st in (scan(directory) or {}).items()}
    log(f"watching {directory} every {interval:g}s")
    while True:
        files = scan(directory)
        if files is not None:
            new = [(st.st_mtime_ns, path) for path, st in files.items()
                   if seen.get(path) != st.st_ino]
            for _, path in sorted(new):
                yield percept_for(path, files[path])
            seen = {path: st.st_ino for path, st in files.items()}
        time.sleep(interval)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between scans")
    parser.add_argument("--include-existing", action="store_true",
                        help="report the files present at start too")
    args = parser.parse_args()
    if args.interval <= 0:
        parser.error("--interval must be positive")
    directory = os.path.abspath(args.directory)
    sensor.run(lambda: watch(directory, args.interval, args.include_existing))


if __name__ == "__main__":
    main()
