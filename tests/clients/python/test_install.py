"""The package installed from the repository into a fresh virtual environment, offline
(no index: pip may not reach PyPI), then imported and used there against a real
`limbic run`.

The offline way on Debian 12: a venv that sees the system's packages (setuptools and wheel,
python3-setuptools and python3-wheel, for the build backend) and pip without build
isolation:

    python3 -m venv --system-site-packages VENV
    VENV/bin/pip install --no-build-isolation ./clients/python

pip builds in the tree it is given (build/, limbic.egg-info/), so the test installs a copy.
"""

import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PACKAGE, Limbic, TempDir, binary  # noqa: E402

USE = r"""
import os, sys, limbic
assert limbic.__file__.startswith(sys.prefix), limbic.__file__   # the venv's, not the tree's
c = limbic.Client(os.environ["URL"])
r = c.add_percept(source="venv", type="check", text="installed")
stream = c.events(after=0, types=["percept_arrived"])
event = next(stream)
stream.close()
assert event["percept_id"] == r["id"], event
try:
    c.get_percept("p-none")
except limbic.NotFound as e:
    print("ok", r["id"], e.status, len(limbic.OPERATIONS))
"""


def offline_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


class Install(unittest.TestCase):

    def test_pip_install_offline_into_a_fresh_venv(self):
        d = TempDir()
        self.addCleanup(d.cleanup)
        source = d / "limbic-python"
        shutil.copytree(PACKAGE, source,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        venv = d / "venv"
        env = offline_env()
        made = subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv],
                              capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(made.returncode, 0, "python3 -m venv (Debian: python3-venv): "
                         + made.stderr)
        python = os.path.join(venv, "bin", "python")
        pip = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                              source], capture_output=True, text=True, env=env, cwd=d.path,
                             timeout=300)
        self.assertEqual(pip.returncode, 0,
                         "pip install --no-build-isolation (Debian: python3-pip, "
                         "python3-setuptools, python3-wheel):\n" + pip.stdout + pip.stderr)
        self.assertIn("Successfully installed limbic-0.1.0", pip.stdout)

        rt = Limbic(d.path, {"state_dir": d / "state", "api": {"port": 0}})
        self.addCleanup(rt.kill)
        use = subprocess.run([python, "-c", USE], capture_output=True, text=True,
                             env=dict(env, URL=rt.url), cwd=d.path, timeout=60)
        self.assertEqual(use.returncode, 0, use.stderr)
        self.assertTrue(use.stdout.startswith("ok p-1 404"), use.stdout)
        rt.stop()

    def setUp(self):
        binary()  # skips without a limbic binary


if __name__ == "__main__":
    unittest.main()
