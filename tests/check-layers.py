#!/usr/bin/env python3
"""warden-controller's include graph (controller/, not controller/snapshot/):
no include cycle between modules (a module is X.c with X.h; X_int.h is X's
private header), and includes go one way: a capability folder includes its
own headers, controller/core/ and common/ only; controller/core/ includes no
capability header. README.md ("Layout") names the folders."""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
ctl = os.path.join(root, 'controller')
inc = re.compile(r'^#include "controller/(.+?)\.h"', re.M)


def module(name):
    return name[:-4] if name.endswith('_int') else name


edges = {}
for d, _, files in os.walk(ctl):
    rel = os.path.relpath(d, ctl)
    if rel.split(os.sep)[0] == 'snapshot':
        continue
    for f in files:
        if not f.endswith(('.c', '.h')):
            continue
        m = module(os.path.normpath(os.path.join(rel, f[:-2])))
        with open(os.path.join(d, f)) as fh:
            for t in inc.findall(fh.read()):
                t = module(t)
                if t.startswith('snapshot/') or t == m:
                    continue
                edges.setdefault(m, set()).add(t)
                edges.setdefault(t, set())

index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]


def strong(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in sorted(edges.get(v, ())):
        if w not in index:
            strong(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        scc = []
        while True:
            w = stack.pop()
            on.discard(w)
            scc.append(w)
            if w == v:
                break
        if len(scc) > 1:
            cycles.append(sorted(scc))


for v in sorted(edges):
    if v not in index:
        strong(v)


def folder(m):
    return m.split('/')[0] if '/' in m else '.'


bad = ['%s -> %s' % (m, t) for m, ts in sorted(edges.items()) for t in sorted(ts)
       if folder(m) != '.' and folder(t) not in (folder(m), 'core')]
for c in cycles:
    print('include cycle: ' + ', '.join(c))
for b in bad:
    print('include against the layers: ' + b)
if cycles or bad:
    sys.exit(1)
print('layers: %d controller modules, no cycle, capabilities -> core -> common' % len(edges))
