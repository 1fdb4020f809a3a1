"""The Python client's tests' harness: `limbic run` on a config in a temporary directory.

The binary is $LIMBIC_BINARY (ctest passes the build's); without it, build/limbic of the
repository, else the test is skipped. The package under test is the repository's
clients/python, put first on sys.path.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PACKAGE = os.path.join(REPO, "clients", "python")
sys.path.insert(0, PACKAGE)

import limbic  # noqa: E402  (after the path)


def binary():
    """The limbic binary to test; SkipTest when there is none."""
    path = os.environ.get("LIMBIC_BINARY") or os.path.join(REPO, "build", "limbic")
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest(f"no limbic binary at {path} (set LIMBIC_BINARY)")
    return path


class Limbic:
    """`limbic run --config DIR/limbic.json` on `config`; `url` once it serves.

    The start line ("... api http://127.0.0.1:PORT, ...") gives the port (api.port 0
    picks a free one). stdout and stderr are read on a thread into `log`.
    """

    def __init__(self, directory, config, wait_s=20.0):
        self.dir = directory
        self.config = config
        self.config_path = os.path.join(directory, "limbic.json")
        with open(self.config_path, "w") as f:
            json.dump(config, f, indent=2)
        self.log = []
        self._eof = False
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(
            [binary(), "--state", config["state_dir"], "run", "--config", self.config_path],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        threading.Thread(target=self._read, daemon=True).start()
        line = self.wait_for_log("api http://", wait_s)
        if line is None:
            self.kill()
            raise AssertionError("limbic did not start:\n" + "".join(self.log))
        at = line.index("api http://") + 4
        self.url = line[at:].split(",")[0].split()[0]
        self.port = int(self.url.rsplit(":", 1)[1])

    def _read(self):
        for raw in self.proc.stdout:
            with self._cond:
                self.log.append(raw.decode("utf-8", "replace"))
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def wait_for_log(self, needle, timeout_s=20.0):
        """The first log line holding `needle`, waiting up to `timeout_s`; None if none."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                for line in self.log:
                    if needle in line:
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or self._eof:
                    return None
                self._cond.wait(min(left, 0.2))

    def stop(self):
        """SIGTERM, and wait for the clean stop."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()

    def kill(self):
        """SIGKILL: a crash."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


class TempDir:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="limbic-py-")

    def __truediv__(self, name):
        return os.path.join(self.path, name)

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


def wait_until(predicate, timeout_s=20.0, what="a condition"):
    """Polls `predicate` until it is true; AssertionError naming `what` at the deadline."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
