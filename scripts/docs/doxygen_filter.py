#!/usr/bin/env python3
"""Doxygen input filter: tablio's headers document themselves with plain // comments, which
Doxygen ignores. This turns the ones that document something into Doxygen comments:

  - the comment that opens a header describes the file (\\file);
  - a comment block just before a declaration at namespace or class scope documents it;
  - a trailing comment on a member (`int x;  // why`) documents that member;
  - classes nested in another's private part are left out (\\cond).

Comments inside function bodies stay plain. Lines are never added or removed, so Doxygen's
line numbers still match the header.
"""
import re
import sys

HEAD_WORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b")
ACCESS = re.compile(r"^\s*(public|private|protected)\s*:")
SECTION = re.compile(r"^\s*//\s*-{3,}")  # "// ----- archives": a heading, not a description
NOT_DECLARATIONS = re.compile(r"^\s*(#|public:|private:|protected:|return\b|if\b|for\b|while\b|"
                              r"switch\b|case\b|default:|do\b|else\b|throw\b|static_assert\b|\}|$)")


def code_of(line):
    """The line without its comment, strings and characters (their braces do not count)."""
    out, i, quote = [], 0, None
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            # A digit separator (1'000) is not a quote.
            if c == "'" and i > 0 and line[i - 1].isalnum() and i + 1 < len(line) and line[i + 1].isalnum():
                pass
            else:
                quote = c
                out.append(c)
        elif line.startswith("//", i):
            break
        else:
            out.append(c)
        i += 1
    return "".join(out)


class Scope:
    """An open brace: a type (namespace, class, struct...) or anything else (a body)."""

    def __init__(self, head):
        words = HEAD_WORDS.findall(head)
        self.is_type = bool(words) and "(" not in head and "=" not in head
        self.is_class = self.is_type and words[-1] in ("class", "struct", "union")
        self.access = "private" if words and words[-1] == "class" else "public"
        self.hidden = False  # a class nested in another's private part


def main():
    lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
    scopes = []         # the braces open at this point
    head = ""           # code since the last ';', '{' or '}': what an opening brace belongs to
    block = []          # indexes of the // lines of the comment block being read
    seen_code = False   # whether anything but comments came yet: the opening comment is the file's
    continued = False   # whether this line continues a preprocessor line
    for n, line in enumerate(lines):
        stripped = line.lstrip()
        if continued or stripped.startswith("#"):
            continued = line.endswith("\\")
            block = []
            continue
        in_type_scope = all(s.is_type for s in scopes)
        access = ACCESS.match(line)
        if access and scopes:
            scopes[-1].access = access.group(1)
        if stripped.startswith("//") and not stripped.startswith("///"):
            block.append(n)
            continue
        if block:
            if not seen_code:
                for i in block:
                    lines[i] = lines[i].replace("//", "///", 1)
                lines[block[-1]] += " \\file"  # at a line's end, \file names the current file
            elif in_type_scope and not NOT_DECLARATIONS.match(line) and not SECTION.match(lines[block[0]]):
                for i in block:
                    lines[i] = lines[i].replace("//", "///", 1)
            block = []
        if stripped:
            seen_code = True
        code = code_of(line)
        trailing = line[len(code):]
        if (scopes and scopes[-1].is_class and in_type_scope and code.rstrip().endswith(";")
                and trailing.lstrip().startswith("//") and not trailing.lstrip().startswith("///")):
            lines[n] = code + trailing.replace("//", "///<", 1)
        for c in code:
            if c == "{":
                scope = Scope(head)
                # Doxygen links a class's summary to its nested classes even when they are all
                # private and left out: hide private nested classes from it altogether.
                if (scope.is_class and scopes and scopes[-1].is_class and scopes[-1].access != "public"
                        and in_type_scope):
                    scope.hidden = True
                    lines[n] = "/** \\cond */ " + lines[n]
                scopes.append(scope)
                head = ""
            elif c == "}":
                if scopes and scopes.pop().hidden:
                    lines[n] += " /** \\endcond */"
                head = ""
            elif c == ";":
                head = ""
            else:
                head += c
        head += " "  # lines are separated by whitespace: keep words apart
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main()
