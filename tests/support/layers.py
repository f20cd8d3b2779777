#!/usr/bin/env python3
"""Include layering and include cycles of the C sources (run by tests/check-layers.sh).

  layers.py --root DIR --rules FILE [FILE...]

FILE... are the .c/.h files to check, relative to DIR. The rules file format is described at
the top of tests/layers.rules. Prints every include a rule forbids (file:line, the include,
the rule) and every include cycle between modules in the rules' acyclic folders; exits 1 when
there is any, 2 when the rules file is malformed.
"""

import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


class RulesError(Exception):
    pass


def under(path, folder):
    """True when path is folder itself or lies below it."""
    return path == folder or path.startswith(folder + "/")


class Rules:
    def __init__(self, path, shown):
        self.path = shown  # as messages name it
        self.allow = {}  # folder -> (line, [entries]); entries "*" = anything
        self.private = {}  # folder -> (line, [exported files])
        self.acyclic = []  # (line, folder)
        self.known = []  # (line, frozenset of modules): cycles tolerated until removed
        with open(path, encoding="utf-8") as f:
            for n, raw in enumerate(f, 1):
                self._line(n, raw.split("#", 1)[0].strip())

    def _line(self, n, text):
        if not text:
            return
        head, sep, tail = text.partition(":")
        if not sep:
            raise RulesError(f"{self.path}:{n}: expected 'FOLDER: ...', 'private FOLDER: ...', "
                             f"'acyclic: ...' or 'known-cycle: ...'")
        head = head.strip()
        items = [norm(i) for i in tail.split()]
        words = head.split()
        if head == "acyclic":
            self.acyclic.extend((n, i) for i in items)
        elif head == "known-cycle":
            if len(items) < 2:
                raise RulesError(f"{self.path}:{n}: a known cycle has two modules or more")
            self.known.append((n, frozenset(items)))
        elif len(words) == 2 and words[0] == "private":
            self.private[norm(words[1])] = (n, items)
        elif len(words) == 1:
            if norm(head) in self.allow:
                raise RulesError(f"{self.path}:{n}: a second rule for {head}")
            self.allow[norm(head)] = (n, items)
        else:
            raise RulesError(f"{self.path}:{n}: cannot read '{head}:'")

    def names(self):
        """(line, path) of every folder and file the rules name (known cycles aside)."""
        for folder, (n, entries) in self.allow.items():
            yield n, folder
            yield from ((n, e) for e in entries if e != "*")
        for folder, (n, exported) in self.private.items():
            yield n, folder
            yield from ((n, e) for e in exported)
        for n, folder in self.acyclic:
            yield n, folder

    def rule_for(self, folder):
        """The most specific rule folder holding folder, or None."""
        best = None
        for r in self.allow:
            if under(folder, r) and (best is None or len(r) > len(best)):
                best = r
        return best

    def check(self, src, target):
        """None when src may include target (repository paths), else why not."""
        folder = os.path.dirname(src)
        rf = self.rule_for(folder)
        line, entries = self.allow[rf]
        if "*" in entries:
            return None
        if not any(under(target, e) for e in entries):
            return (f"{rf} may include only: {' '.join(entries)} ({self.path}:{line})")
        for pf, (pline, exported) in self.private.items():
            if under(target, pf) and not under(folder, pf) and target not in exported:
                return (f"{pf} is private; from outside it only {' '.join(exported)} "
                        f"({self.path}:{pline})")
        return None


def norm(p):
    return p.strip().rstrip("/") or "."


def read_includes(root, path, tree):
    """[(line, text, resolved repository path or None)] of path's #include "..."."""
    out = []
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            resolved = None
            for cand in (inc, os.path.join(os.path.dirname(path), inc)):
                cand = os.path.normpath(cand)
                if cand in tree:
                    resolved = cand
                    break
            out.append((n, inc, resolved))
    return out


def module_of(path, tree=None):
    """The module of path: its stem; a header x_int.h beside x.c or x.h is module x's own."""
    stem = os.path.splitext(path)[0]
    if tree is not None and path.endswith("_int.h"):
        base = stem[: -len("_int")]
        if base + ".c" in tree or base + ".h" in tree:
            return base
    return stem


def find_cycles(edges):
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, onstack, stack, sccs = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        onstack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    onstack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in onstack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    onstack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))
    return sorted(sccs)


def cycle_path(comp, edges):
    """One cycle through comp's first module, as a list of modules (first repeated last)."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp + [start]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--rules", required=True)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    shown = os.path.relpath(os.path.abspath(args.rules), os.path.abspath(args.root))
    shown = args.rules if shown.startswith("..") else shown
    try:
        rules = Rules(args.rules, shown)
    except (OSError, RulesError) as e:
        print(f"layers: {e}", file=sys.stderr)
        return 2
    files = sorted(set(os.path.normpath(f) for f in args.files))
    tree = set(files)
    bad = 0  # forbidden includes
    stale = 0  # rules naming nothing, files under no rule
    for n, name in rules.names():
        if not any(under(f, name) for f in tree):
            print(f"{shown}:{n}: {name} names no file in the tree")
            stale += 1
    edges = {}  # module -> {module}
    why = {}  # (module, module) -> "file:line"

    def checked(p):
        return any(under(p, a) for _, a in rules.acyclic)

    for path in files:
        a = module_of(path, tree)
        if rules.rule_for(os.path.dirname(path)) is None:
            print(f"{path}: no rule in {shown} covers its folder")
            stale += 1
            continue
        if checked(path):
            edges.setdefault(a, set())
        for n, inc, target in read_includes(args.root, path, tree):
            if target is None:
                continue
            reason = rules.check(path, target)
            if reason:
                print(f'{path}:{n}: #include "{inc}": {reason}')
                bad += 1
            b = module_of(target, tree)
            if checked(path) and checked(target) and a != b:
                edges[a].add(b)
                why.setdefault((a, b), f"{path}:{n}")
    cycles = []
    seen = set()
    for comp in find_cycles(edges):
        path = cycle_path(comp, edges)
        steps = ", ".join(f"{x} -> {y} ({why[(x, y)]})" for x, y in zip(path, path[1:]))
        tolerated = [n for n, k in rules.known if k == frozenset(comp)]
        if tolerated:
            seen.add(frozenset(comp))
            print(f"known include cycle ({shown}:{tolerated[0]}) between modules "
                  f"{{{', '.join(comp)}}}: {steps}")
            continue
        cycles.append(comp)
        print(f"include cycle between modules {{{', '.join(comp)}}}: {steps}")
    for n, k in rules.known:
        if k not in seen:
            print(f"note: {shown}:{n}: known cycle {{{', '.join(sorted(k))}}} is gone "
                  f"(or changed): remove the line")
    if bad or cycles or stale:
        print(f"layers: {bad} forbidden include(s), {len(cycles)} include cycle(s), "
              f"{stale} rule problem(s) (rules: {shown})")
        return 1
    deps = sum(len(e) for e in edges.values())
    folders = " ".join(a for _, a in rules.acyclic)
    print(f"layers: {len(files)} files, {deps} module dependencies in {folders}, "
          f"{len(seen)} known cycle(s): clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
