#!/usr/bin/env python3
"""Fails when the API reference leaves a public name undescribed.

    check_reference.py DOXYGEN_XML_DIR

Every class, struct and union of namespace tablio (its detail namespaces aside) needs a
description, and so does every type alias, enum and variable at namespace scope, and every
public function, at namespace scope or a member, except:
  - constructors that copy, move or take nothing, destructors and assignment operators, which
    mean what the language says;
  - an overload whose namesake in the same scope is described (a comment before a run of
    overloads describes them all);
  - a virtual function that overrides one, which shows the description of what it overrides.
Each name left undescribed is printed as file:line: name, for an editor to jump to.
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET


def described(element):
    return any("".join(part.itertext()).strip()
               for part in (element.find("briefdescription"), element.find("detaileddescription"))
               if part is not None)


def special(member, scope_name):
    name, args = member.findtext("name"), member.findtext("argsstring") or ""
    own = scope_name.split("::")[-1].split("<")[0]
    if name.startswith("~") or name == "operator=":
        return True
    if name != own:
        return False
    args = args.replace(" ", "")
    return args.startswith(("()", f"(const{own}&", f"({own}&&", f"({own}<"))


def main():
    xml_dir = sys.argv[1]
    missing = []
    for path in sorted(glob.glob(os.path.join(xml_dir, "*.xml"))):
        for scope in ET.parse(path).getroot().iter("compounddef"):
            kind, name = scope.get("kind"), scope.findtext("compoundname") or ""
            if kind not in ("namespace", "class", "struct", "union"):
                continue
            if not name.startswith("tablio") or "detail" in name.split("::"):
                continue
            if kind != "namespace" and scope.get("prot") != "public":
                continue
            where = scope.find("location")
            if kind != "namespace" and not described(scope):
                missing.append(f"{where.get('file')}:{where.get('line')}: {kind} {name}")
            if kind == "namespace":
                for member in scope.iter("memberdef"):
                    if member.get("kind") in ("typedef", "enum", "variable") and not described(member):
                        at = member.find("location")
                        missing.append(f"{at.get('file')}:{at.get('line')}: {member.get('kind')} "
                                       f"{name}::{member.findtext('name')}")
            functions = [m for m in scope.iter("memberdef")
                         if m.get("kind") == "function" and m.get("prot") == "public"]
            named = {m.findtext("name") for m in functions if described(m)}
            for member in functions:
                if (described(member) or special(member, name) or member.findtext("name") in named
                        or member.find("reimplements") is not None):
                    continue
                at = member.find("location")
                missing.append(f"{at.get('file')}:{at.get('line')}: "
                               f"{name}::{member.findtext('name')}{member.findtext('argsstring')}")
    if missing:
        print(f"{len(missing)} public names have no description:")
        print("\n".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
