"""What `kubectl explain` must print for a CRD field, read from the CRD file.

  crd_explain.py FILE.yaml KIND FIELD.PATH   prints, one a line, "name<TAB>description"
                                             for the field's direct children (the
                                             description with whitespace collapsed)
  crd_explain.py --fields FILE.yaml KIND FIELD.PATH
                                             prints every field name below it, depth first
A path of "" is the kind itself. Array fields are entered through their items.
"""
import sys

import yaml


def schema_of(path, kind, field):
    for doc in yaml.safe_load_all(open(path)):
        if doc and doc.get("kind") == "CustomResourceDefinition" and \
                doc["spec"]["names"]["kind"] == kind:
            s = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            for part in [p for p in field.split(".") if p]:
                while "items" in s:
                    s = s["items"]
                s = s["properties"][part]
            while "items" in s:
                s = s["items"]
            return s
    sys.exit("no CRD of kind %s in %s" % (kind, path))


def names(s, out):
    while "items" in s:
        s = s["items"]
    for k, v in sorted((s.get("properties") or {}).items()):
        out.append(k)
        names(v, out)


def main():
    args = sys.argv[1:]
    if args and args[0] == "--fields":
        out = []
        names(schema_of(*args[1:]), out)
        print("\n".join(out))
        return
    s = schema_of(*args)
    for k, v in sorted((s.get("properties") or {}).items()):
        print("%s\t%s" % (k, " ".join((v.get("description") or "").split())))


main()
