"""Every field of the given CustomResourceDefinitions has a description.

  crd_descriptions.py FILE.yaml...

Walks each version's openAPIV3Schema (the root, every property, array items and
map values) and prints "FILE: VERSION: PATH has no description" for each schema
with no (or a blank) description; exits 1 when there is any, 0 otherwise.
Schemas under x-kubernetes-preserve-unknown-fields keep their own description
requirement: the field itself must say what it holds.
"""
import sys

import yaml


def walk(schema, path, missing):
    for name, sub in (schema.get("properties") or {}).items():
        here = path + "." + name
        if not str(sub.get("description") or "").strip():
            missing.append(here)
        walk(sub, here, missing)
    items = schema.get("items")
    if isinstance(items, dict):
        walk(items, path + "[]", missing)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        walk(extra, path + "{}", missing)


def main():
    bad = 0
    for path in sys.argv[1:]:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        for doc in docs:
            if doc.get("kind") != "CustomResourceDefinition":
                continue
            for version in doc["spec"]["versions"]:
                schema = version["schema"]["openAPIV3Schema"]
                missing = [] if str(schema.get("description") or "").strip() else ["(the kind)"]
                walk(schema, "", missing)
                for field in missing:
                    print("%s: %s: %s has no description" % (path, version["name"], field))
                bad += len(missing)
    return 1 if bad else 0


sys.exit(main())
