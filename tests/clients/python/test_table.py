"""The client follows the document: a method for every operation of docs/openapi.json, no
method calling a path the document does not list, and _operations.py as generate.py
writes it from the document today. No runtime needed.
"""

import ast
import inspect
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PACKAGE, REPO, limbic  # noqa: E402


def document():
    with open(os.path.join(REPO, "docs", "openapi.json"), encoding="utf-8") as f:
        doc = json.load(f)
    return {op["operationId"]: (method.upper(), path, op)
            for path, item in doc["paths"].items()
            for method, op in item.items() if isinstance(op, dict) and "operationId" in op}


class FollowsTheDocument(unittest.TestCase):

    def test_every_operation_has_its_method(self):
        for op_id, (method, path, op) in document().items():
            with self.subTest(op_id):
                self.assertEqual(limbic.OPERATIONS.get(op_id), (method, path))
                fn = getattr(limbic.Client, op_id, None)
                self.assertTrue(callable(fn), f"no method {op_id}")
                params = inspect.signature(fn).parameters
                for p in op.get("parameters", []):
                    name = p["name"] + ("_" if p["name"] in ("from",) else "")
                    self.assertIn(name, params, f"{op_id}: no argument for {p['name']}")
                body = (op.get("requestBody") or {}).get("content", {}).get(
                    "application/json", {}).get("schema", {})
                for field in body.get("properties", {}):
                    self.assertIn(field, params, f"{op_id}: no argument for body field {field}")

    def test_no_method_calls_a_path_the_document_does_not_list(self):
        listed = {(m, p) for m, p, _ in document().values()}
        for op_id, (method, path) in limbic.OPERATIONS.items():
            with self.subTest(op_id):
                self.assertIn((method, path), listed)
        # Each method sends its own operation, by name: no path is written in a method.
        with open(os.path.join(PACKAGE, "limbic", "_operations.py"), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Operations")
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef):
                continue
            with self.subTest(fn.name):
                self.assertIn(fn.name, limbic.OPERATIONS)
                calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)
                         and isinstance(n.func, ast.Attribute) and n.func.attr in ("_call", "events")]
                self.assertEqual(len(calls), 1)
                if calls[0].func.attr == "_call":
                    self.assertEqual(calls[0].args[0].value, fn.name)
                else:
                    self.assertEqual(limbic.OPERATIONS[fn.name][1], "/v1/events/stream")
                strings = [n.value for n in ast.walk(fn) if isinstance(n, ast.Constant)
                           and isinstance(n.value, str) and n is not fn.body[0].value]
                self.assertFalse([v for v in strings if v.startswith("/")])

    def test_the_generated_module_is_current(self):
        run = subprocess.run([sys.executable, os.path.join(PACKAGE, "generate.py"), "--check"],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)


if __name__ == "__main__":
    unittest.main()
