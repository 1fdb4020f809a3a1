#!/usr/bin/env python3
"""Writes limbic/_operations.py from the API's OpenAPI document.

    python3 clients/python/generate.py [--doc docs/openapi.json] [--check]

One method per operation of the document, named by its operationId, its
keyword arguments the operation's path and query parameters and its body's
fields; a TypedDict per record of components/schemas and per request body;
and the table OPERATIONS = {operationId: (METHOD, PATH)} that the client's
transport and the tests read. Run it by hand after the document changes
(`make openapi`) and commit the result: the package needs no generation step
when it is installed. --check exits 1 when the checked-in module is stale.

Standard library only.
"""

import argparse
import json
import keyword
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DOC = os.path.join(HERE, "..", "..", "docs", "openapi.json")
OUT = os.path.join(HERE, "limbic", "_operations.py")

TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
         "object": "Dict[str, Any]", "null": "None"}
METHODS = ("get", "put", "post", "patch", "delete")


def py_name(name):
    """A parameter's Python name: `from` -> `from_`."""
    return name + "_" if keyword.iskeyword(name) else name


def class_name(name):
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def type_of(schema, body_names):
    """The Python annotation of a JSON Schema."""
    if not isinstance(schema, dict):
        return "Any"
    ref = schema.get("$ref")
    if ref:
        if ref.startswith("#/components/schemas/"):
            return ref.rsplit("/", 1)[1]
        return "Any"
    if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return "Literal[" + ", ".join(json.dumps(v) for v in schema["enum"]) + "]"
    t = schema.get("type")
    if isinstance(t, list):
        parts = [type_of(dict(schema, type=one), body_names) for one in t if one != "null"]
        inner = parts[0] if len(parts) == 1 else "Union[" + ", ".join(parts) + "]"
        return "Optional[" + inner + "]" if "null" in t else inner
    if t == "array":
        return "List[" + type_of(schema.get("items"), body_names) + "]"
    return TYPES.get(t, "Any")


def comment(text, indent):
    """`text` as a docstring body, wrapped at 100 columns."""
    lines = []
    for para in text.strip().split("\n\n"):
        lines += textwrap.wrap(" ".join(para.split()), 100 - len(indent)) + [""]
    return "\n".join((indent + l) if l else "" for l in lines[:-1])


def typed_dict(name, schema, body_names, doc):
    """A TypedDict: its required keys in a total base, the rest total=False."""
    props = schema.get("properties", {})
    required = [k for k in props if k in schema.get("required", [])]
    optional = [k for k in props if k not in required]
    out = []
    ok = all(k.isidentifier() and not keyword.iskeyword(k) for k in props)
    if not ok:  # keys that are not identifiers: the functional form
        items = ", ".join(f"{json.dumps(k)}: {type_of(props[k], body_names)}" for k in props)
        return [f"{name} = TypedDict({json.dumps(name)}, {{{items}}}, total=False)", ""]
    base = "TypedDict"
    if required and optional:
        out += [f"class _{name}Required(TypedDict):"]
        out += [f"    {k}: {type_of(props[k], body_names)}" for k in required]
        out += ["", ""]
        base = f"_{name}Required"
    total = "" if not optional else ", total=False"
    out += [f"class {name}({base}{total}):", f'    """{doc}"""']
    keys = optional if required and optional else required + optional
    out += [f"    {k}: {type_of(props[k], body_names)}" for k in keys]
    return out + ["", ""]


def operations(doc):
    """[(op_id, METHOD, path, operation)] in the document's order."""
    ops = []
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                ops.append((item[method]["operationId"], method.upper(), path, item[method]))
    return ops


def answer_kind(op):
    """json | text | bytes | stream: how the method returns a 2xx answer."""
    for status, r in op.get("responses", {}).items():
        if status.startswith("2"):
            content = r.get("content", {})
            if "application/json" in content:
                return "json", content["application/json"].get("schema", {})
            if "text/event-stream" in content:
                return "stream", {}
            if "text/plain" in content:
                return "text", {}
            if content:
                return "bytes", {}
    return "json", {}


def result_statuses(op):
    """Statuses beyond 2xx answered with a result, not an Error (healthz's 503)."""
    out = []
    for status, r in op.get("responses", {}).items():
        schema = r.get("content", {}).get("application/json", {}).get("schema", {})
        if status.isdigit() and not status.startswith("2") and schema and \
                schema.get("$ref") != "#/components/schemas/Error":
            out.append(int(status))
    return tuple(out)


def body_schema(op):
    rb = op.get("requestBody")
    if not rb:
        return None, False
    schema = rb.get("content", {}).get("application/json", {}).get("schema", {})
    return schema, bool(rb.get("required"))


def method_source(op_id, method, path, op, body_names):
    params = [p for p in op.get("parameters", []) if p.get("in") in ("path", "query")]
    path_params = [p for p in params if p["in"] == "path"]
    query_params = [p for p in params if p["in"] == "query"]
    body, body_required = body_schema(op)
    kind, answer = answer_kind(op)

    sig = ["self"]
    doc_args = []
    for p in path_params:
        sig.append(f"{py_name(p['name'])}: str")
        doc_args.append((p["name"], "path", p.get("description", "")))
    kw = []  # keyword-only: required first
    for p in query_params:
        t = type_of(p.get("schema", {}), body_names)
        if p["name"] == "type" and "comma-separated" in p.get("description", ""):
            t = "Union[str, List[str]]"  # a list: joined with commas
        kw.append((p.get("required", False), f"{py_name(p['name'])}: "
                   + (t if p.get("required") else f"Optional[{t}] = None")))
        doc_args.append((p["name"], "query", p.get("description", "")))
    body_fields, whole_body = [], False
    if body is not None:
        props = body.get("properties")
        if props is None:  # a body of no declared fields: passed whole
            whole_body = True
            t = "Any" if "type" not in body else "Dict[str, Any]"
            kw.append((body_required, "body: " + (t if body_required else f"Optional[{t}] = None")))
            doc_args.append(("body", "body", body.get("description", "the request's body")))
        else:
            taken = {py_name(p["name"]) for p in params}
            for name, s in props.items():
                if py_name(name) in taken:
                    sys.exit(f"generate.py: {op_id}: body field {name} is also a parameter")
                req = name in body.get("required", [])
                t = type_of(s, body_names)
                kw.append((req, f"{py_name(name)}: " + (t if req else f"Optional[{t}] = None")))
                body_fields.append(name)
                doc_args.append((name, "body", s.get("description", "")))
    kw.sort(key=lambda x: not x[0])
    if kw:
        sig.append("*")
        sig += [k for _, k in kw]
    extra = body is not None and not whole_body
    if extra:
        sig.append("**extra: Any")

    ret = {"text": "str", "bytes": "bytes", "stream": "Iterator[Event]"}.get(kind)
    if ret is None:
        ref = answer.get("$ref") if isinstance(answer, dict) else None
        ret = ref.rsplit("/", 1)[1] if ref else "Dict[str, Any]"

    head = f"    def {op_id}({', '.join(sig)}) -> {ret}:"
    if len(head) > 100:
        head = f"    def {op_id}(\n" + "".join(f"        {s},\n" for s in sig) + f"    ) -> {ret}:"
    text = op.get("summary", op_id)
    if op.get("description"):
        text += "\n\n" + op["description"]
    lines = [head, '        """' + comment(text, "        ").lstrip()]
    lines += ["", f"        {method} {path}"]
    if doc_args:
        lines += ["", "        Args:"]
        for name, where, d in doc_args:
            lines.append(comment(f"{py_name(name)} ({where}): {d or '-'}", "            "))
        if extra:
            lines.append("            **extra: further body fields, sent as given")
    lines.append('        """')

    call = [f'"{op_id}"']
    if path_params:
        call.append("path={" + ", ".join(f'"{p["name"]}": {py_name(p["name"])}'
                                           for p in path_params) + "}")
    if query_params:
        call.append("query={" + ", ".join(f'"{p["name"]}": {py_name(p["name"])}'
                                            for p in query_params) + "}")
    if body is not None:
        if whole_body:
            call.append("body=body")
        else:
            fields = [f'"{n}": {py_name(n)}' for n in body_fields]
            one = "body=_fields({" + ", ".join(fields) + "}, extra)"
            if len(one) > 84:  # one field a line
                one = ("body=_fields({\n" + "".join(f"                {f},\n" for f in fields)
                       + "            }, extra)")
            call.append(one)
        call.append(f"body_required={body_required}")
    if kind == "stream":
        q = {p["name"]: py_name(p["name"]) for p in query_params}
        lines.append(f"        return self.events(after={q.get('after', 'None')}, "
                     f"types={q.get('type', 'None')})")
    else:
        stmt = "        return self._call(" + ", ".join(call) + ")"
        if len(stmt) > 100 or "\n" in stmt:
            stmt = "        return self._call(\n" + "".join(f"            {c},\n" for c in call) + "        )"
        lines.append(stmt)
    return lines + [""]


def generate(doc):
    ops = operations(doc)
    body_names = {}
    for op_id, _, _, op in ops:
        body, _ = body_schema(op)
        if body and body.get("properties"):
            body_names[op_id] = class_name(op_id) + "Body"

    out = ['"""The operations of limbic\'s HTTP API: generated from docs/openapi.json.',
           "",
           "Do not edit: run `python3 clients/python/generate.py` after the document changes.",
           '"""',
           "# fmt: off",
           "# flake8: noqa",
           "",
           "from typing import Any, Dict, Iterator, List, Literal, Optional, Tuple, TypedDict, Union",
           "",
           "#: The document's version (info.version) these methods were made from.",
           f"API_VERSION = {json.dumps(doc.get('info', {}).get('version', ''))}",
           "",
           "#: operationId -> (HTTP method, path template): one entry per operation.",
           "OPERATIONS: Dict[str, Tuple[str, str]] = {"]
    out += [f'    "{op_id}": ("{m}", "{p}"),' for op_id, m, p, _ in ops]
    out += ["}", "",
            "#: operationId -> (how a 2xx answer is read: json|text|bytes|stream,",
            "#: seconds the server may take: x-limbic-mcp's timeout_ms, 0 when not given,",
            "#: other statuses answered with a result rather than an error).",
            "DETAILS: Dict[str, Tuple[str, float, Tuple[int, ...]]] = {"]
    for op_id, _, _, op in ops:
        timeout = op.get("x-limbic-mcp", {}).get("timeout_ms", 0) / 1000
        statuses = result_statuses(op)
        out.append(f'    "{op_id}": ("{answer_kind(op)[0]}", {timeout:g}, {statuses!r}),')
    out += ["}", "", ""]

    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        out += typed_dict(name, schema, body_names,
                          schema.get("description", f"A {name} record (components/schemas/{name})."))
    for op_id, _, _, op in ops:
        body, _ = body_schema(op)
        if op_id in body_names:
            out += typed_dict(body_names[op_id], body, body_names, f"The body of {op_id}.")

    out += ["def _fields(fields: Dict[str, Any], extra: Dict[str, Any]) -> Dict[str, Any]:",
            '    """The body: the fields given (None = not given), then extra ones as given."""',
            "    body = {k: v for k, v in fields.items() if v is not None}",
            "    body.update(extra)",
            "    return body",
            "", "",
            "class Operations:",
            '    """One method per operation; the transport is the subclass\'s `_call`."""',
            ""]
    for op_id, m, p, op in ops:
        out += method_source(op_id, m, p, op, body_names)
    return "\n".join(out).rstrip() + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", default=DEFAULT_DOC, help="the OpenAPI document")
    parser.add_argument("--out", default=OUT, help="the module to write")
    parser.add_argument("--check", action="store_true", help="exit 1 when --out is not current")
    args = parser.parse_args()
    with open(args.doc, encoding="utf-8") as f:
        source = generate(json.load(f))
    if args.check:
        with open(args.out, encoding="utf-8") as f:
            current = f.read()
        if current != source:
            sys.exit(f"{args.out} is stale: run python3 clients/python/generate.py")
        return
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(source)
    os.replace(tmp, args.out)
    print(f"wrote {os.path.relpath(args.out)}")


if __name__ == "__main__":
    main()
