#!/usr/bin/env python3
"""The kubectl examples of a doc page, as a playground runs them.

  doc_kubectl.py DOC.md [OLD=NEW ...]

Prints, as JSON lines, every command of the page's fenced blocks that starts
with "$ kubectl" and is followed by its output (not an error): {"line": the
command as the page shows it, "argv": its words (after the substitutions),
"stdin": the text of its <<'END' here-document or null, "header": the first
line of output the page shows (the column names of a `get`) or null,
"output": every line the page shows after the command, up to the next one}. Each
OLD=NEW replaces OLD by NEW in the arguments and the here-document: what the
playground names differently (its bucket, its Secrets). Examples the page
shows refused ("Error from server") are left out: they need objects of their
own.
"""
import json
import shlex
import sys


def blocks(text):
    out, cur, inside = [], [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            if inside:
                out.append(cur)
            cur, inside = [], not inside
        elif inside:
            cur.append(line)
    return out


def main():
    doc, subs = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]

    def sub(s):
        for old, new in subs:
            s = s.replace(old, new)
        return s

    for block in blocks(open(doc).read()):
        i = 0
        while i < len(block):
            line = block[i]
            i += 1
            if not line.startswith("$ kubectl"):
                continue
            cmd, stdin = line[2:], None
            if "<<'END'" in cmd:
                body = []
                while i < len(block) and block[i] != "END":
                    body.append(block[i])
                    i += 1
                i += 1
                stdin = sub("\n".join(body) + "\n")
                cmd = cmd.replace("<<'END'", "")
            nxt = block[i] if i < len(block) else ""
            if nxt.startswith("Error from server"):
                continue
            header = nxt if nxt.startswith("NAME ") else None
            j = i
            while j < len(block) and not block[j].startswith("$ "):
                j += 1
            print(json.dumps({"line": line, "argv": shlex.split(sub(cmd)), "stdin": stdin,
                              "header": header, "output": "\n".join(block[i:j])}))


main()
