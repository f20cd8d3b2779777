#!/usr/bin/env python3
"""The metric names a Grafana dashboard's or a PrometheusRule's PromQL expressions read.

    promnames.py FILE.json            one name per line (sorted, unique)

FILE is a dashboard (every targets[].expr and templating query, label_values' first
argument) or rule groups ({"groups": [...]}: every rules[].expr). Exit 1 when an
expression yields no metric name (an expression this reader does not understand).
"""
import json
import re
import sys

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
            "unless", "offset", "inf", "nan"}


def names(expr):
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)             # string literals
    e = re.sub(r"\{[^}]*\}", "", e)                          # label matchers
    e = re.sub(r"\[[^\]]*\]", "", e)                         # ranges and subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)
    m = re.match(r"\s*label_values\s*\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,", e)
    if m:
        return {m.group(1)}
    out = set()
    for m in re.finditer(r"(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\()?", e):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        out.add(word)
    return out


def exprs(doc):
    if "groups" in doc:
        for g in doc["groups"]:
            for r in g.get("rules", []):
                yield r["expr"]
        return
    stack = list(doc.get("panels", []))
    while stack:
        p = stack.pop()
        stack.extend(p.get("panels", []))
        for t in p.get("targets", []):
            yield t["expr"]
    for v in doc.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]
            yield q["query"] if isinstance(q, dict) else q


def main():
    doc = json.load(open(sys.argv[1]))
    seen = set()
    n = 0
    for e in exprs(doc):
        n += 1
        got = names(str(e))
        if not got:
            sys.exit("no metric name in expression: %s" % e)
        seen |= got
    if not n:
        sys.exit("no expression in %s" % sys.argv[1])
    print("\n".join(sorted(seen)))


main()
