#!/usr/bin/env python3
"""The precompiled header hides no missing #include (ctest build/pch_check).

The normal build force-includes a PCH (CMakeLists.txt, LIMBIC_PCH) that
holds <algorithm>, <map>, ... and nlohmann/json.hpp (and Catch2 for the
tests). A file that uses std::sort without <algorithm> then compiles here
and fails in every build without it: the clang fuzz build (`make fuzz`),
a build with -DLIMBIC_PCH=OFF. This test compiles, without the PCH and
with -fsyntax-only, every file the PCH could be hiding something from:

  - a translation unit (compile_commands.json) whose own includes, followed
    through the project's headers, do not reach every header the PCH holds.
    nlohmann/json.hpp includes every standard header the PCH holds, and
    catch.hpp is the rest of the tests' PCH, so a file that reaches them
    sees, after its #includes, all that the PCH would have given it;
  - a project header that does not reach them either, compiled on its own
    (a `#include "it"` with the flags of a file that uses it): a file that
    reaches json.hpp may still include such a header before json.hpp.

The rest cannot be hurt, and are not compiled again: that is what makes
the check cheap (bench/NOTES.md, "The PCH hides no include"). --all
compiles every translation unit instead, to measure or to be sure.

Usage: pch_check.py --build DIR --source DIR [--jobs N] [--all] [--compiler CXX]
Exit 0 when every file compiles; 1 with each failure's compiler output.
"""
import argparse
import concurrent.futures
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--build', required=True)
    p.add_argument('--source', required=True)
    p.add_argument('--jobs', type=int, default=os.cpu_count() or 2)
    p.add_argument('--all', action='store_true', help='every translation unit')
    p.add_argument('--compiler', help='instead of the one in compile_commands.json')
    p.add_argument('--list', action='store_true', help='print what would be compiled, only')
    return p.parse_args()


def without_pch(args):
    """A compile command's arguments without the PCH, -o and -c, and with
    -fsyntax-only; and the PCH header it used (None if none)."""
    out, pch, skip = [], None, False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a == '-include' and i + 1 < len(args) and args[i + 1].endswith('cmake_pch.hxx'):
            pch, skip = args[i + 1], True
        elif a in ('-o', '-c', '-MF', '-MT', '-MQ'):
            skip = True
        elif a in ('-Winvalid-pch', '-MD', '-MMD'):
            continue
        else:
            out.append(a)
    return out + ['-fsyntax-only'], pch


def include_dirs(args, directory):
    dirs = []
    for i, a in enumerate(args):
        for flag in ('-I', '-isystem'):
            if a == flag and i + 1 < len(args):
                dirs.append(args[i + 1])
            elif a.startswith(flag) and len(a) > len(flag):
                dirs.append(a[len(flag):])
    return [os.path.normpath(os.path.join(directory, d)) for d in dirs]


class Scanner:
    """The #includes of the project's files, followed through the project's
    own headers (those under the source or build dir)."""

    def __init__(self, roots):
        self.roots = roots
        self.cache = {}

    def own(self, path):
        return any(path.startswith(r + os.sep) for r in self.roots)

    def direct(self, path):
        if path not in self.cache:
            try:
                text = open(path, encoding='utf-8', errors='replace').read()
            except OSError:
                text = ''
            self.cache[path] = INCLUDE.findall(text)
        return self.cache[path]

    def closure(self, path, dirs):
        """(project headers reached, names of other headers included)."""
        seen, system, todo = set(), set(), [path]
        while todo:
            f = todo.pop()
            for kind, name in self.direct(f):
                where = ([os.path.dirname(f)] if kind == '"' else []) + dirs
                found = next((os.path.normpath(os.path.join(d, name)) for d in where
                              if os.path.isfile(os.path.join(d, name))), None)
                if found and self.own(found):
                    if found not in seen:
                        seen.add(found)
                        todo.append(found)
                else:
                    system.add(name)
        return seen, system


def pch_headers(pch):
    text = open(pch).read()
    return [name for kind, name in INCLUDE.findall(text) if kind == '<']


def header_path(compiler, flags, name, directory):
    """The file `#include <name>` opens with `flags`, and every file it pulls in."""
    flags = [f for f in flags if f != '-fsyntax-only']
    r = subprocess.run([compiler] + flags + ['-M', '-x', 'c++', '-'],
                       input=f'#include <{name}>\n', capture_output=True, text=True, cwd=directory)
    deps = r.stdout.replace('\\\n', ' ').split()[1:]
    # (stdc-predef.h is included before anything, implicitly)
    deps = [os.path.normpath(os.path.join(directory, d)) for d in deps
            if d != '-' and not d.endswith('/stdc-predef.h')]
    return (deps[0] if deps else None), set(deps)


def main():
    a = parse_args()
    source, build = os.path.realpath(a.source), os.path.realpath(a.build)
    commands = json.load(open(os.path.join(build, 'compile_commands.json')))
    scanner = Scanner([source, build])
    units = []  # (file, directory, compiler, flags, pch)
    for e in commands:
        f = os.path.realpath(e['file'])
        args = e.get('arguments') or shlex.split(e['command'])
        flags, pch = without_pch(args[1:])
        flags = [x for x in flags if x != f and x != e['file']]
        # A unity batch (LIMBIC_UNITY; tests): each file it includes is a
        # unit of its own here, as it is in a build without unity batches.
        files = [f]
        if re.search(r'/Unity/unity_[^/]*\.cxx$', f):
            files = [os.path.realpath(m) for m in
                     re.findall(r'^#include "([^"]+)"', open(f).read(), re.M)]
        for f in files:
            if not f.startswith(source + os.sep) or f.startswith(build + os.sep):
                continue  # generated (the PCH's own, embedded files): nothing to hide
            units.append((f, e['directory'], a.compiler or args[0], flags, pch))

    # What each PCH holds, and which of its headers pull in the others.
    provides = {}  # pch -> {header name: set of names it brings}
    for pch in sorted({u[4] for u in units if u[4]}):
        _, directory, compiler, flags, _ = next(u for u in units if u[4] == pch)
        names = pch_headers(pch)
        paths = {n: header_path(compiler, flags, n, directory) for n in names}
        provides[pch] = {n: {m for m in names if paths[m][0] in paths[n][1]} for n in names}

    def covered(pch, system):
        """Whether a file including `system` (names) sees all `pch` holds."""
        if not pch:
            return True
        seen = set()
        for n in system:
            seen |= provides[pch].get(n, set())
        return seen >= set(provides[pch])

    jobs = []  # (what, directory, compiler, flags, input or None)
    headers = {}  # project header -> (unit) that reaches it
    for f, directory, compiler, flags, pch in units:
        dirs = include_dirs(flags, directory)
        reached, system = scanner.closure(f, dirs)
        if a.all or not covered(pch, system):
            jobs.append((f, directory, compiler, flags + [f], None))
        for h in reached:
            if h.endswith('.h') and h not in headers:
                headers[h] = (directory, compiler, flags, pch, dirs)
    if not a.all:
        for h, (directory, compiler, flags, pch, dirs) in sorted(headers.items()):
            _, system = scanner.closure(h, dirs)
            if not covered(pch, system):
                jobs.append((h, directory, compiler, flags + ['-x', 'c++', '-'],
                             f'#include "{h}"\n'))

    if a.list:
        for j in jobs:
            print(os.path.relpath(j[0], source))
        print(f'{len(jobs)} files')
        return 0

    def run(job):
        what, directory, compiler, flags, stdin = job
        r = subprocess.run([compiler] + flags, input=stdin, capture_output=True, text=True,
                           cwd=directory)
        return what, r.returncode, r.stderr

    start = time.time()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for what, code, err in pool.map(run, jobs):
            if code != 0:
                failed.append((what, err))
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    n_units = sum(1 for j in jobs if j[4] is None)
    print(f'pch_check: compiled {n_units} of {len(units)} translation units and '
          f'{len(jobs) - n_units} of {len(headers)} project headers without the PCH '
          f'(-fsyntax-only) in {time.time() - start:.1f} s, '
          f'{cpu.ru_utime + cpu.ru_stime:.1f} CPU s')
    for what, err in failed:
        print(f'\npch_check: {os.path.relpath(what, source)} does not compile without the '
              f'precompiled header (a missing #include?):\n{err}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
