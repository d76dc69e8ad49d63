#!/usr/bin/env python3
"""Checks that GNU C++'s extensions appear only where other compilers (MSVC) will not see them.

A line of the library that uses one (an attribute, a builtin, __int128, inline assembly, ...)
must sit in a branch of `#if TABLIO_GNU_EXTENSIONS` (core/config.hpp), or of a condition on a
macro defined only inside such a branch (TABLIO_VECTOR_EXTENSIONS, ...); core/config.hpp, which
spells them once behind its macros, is the exception.
    gnu_extensions.py FOLDER...
"""
import pathlib
import re
import sys

EXTENSION = re.compile(
    r"__attribute__|__builtin_|__int128|__PRETTY_FUNCTION__|__atomic_|__sync_|__extension__|"
    r"__asm__|\basm\s*\(|__typeof__")
DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif|define)\b\s*(.*)")
HOME = "core/config.hpp"


def code_lines(path):
    """The file's lines without comments or string literals' contents."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    for line in text.split("\n"):
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        yield line.split("//", 1)[0]


def is_gnu_condition(condition, gnu_macros):
    """Whether a condition holds only with GNU extensions (names them, not negated)."""
    for name in ["TABLIO_GNU_EXTENSIONS", *gnu_macros]:
        for m in re.finditer(r"\b%s\b" % name, condition):
            before = condition[: m.start()].rstrip()
            before = re.sub(r"defined\s*\(?\s*$", "", before).rstrip()
            if not before.endswith("!"):
                return True
    return False


def walk(path, gnu_macros, on_line):
    """Calls on_line(number, line, guarded, directive) for each line of code."""
    stack = []  # one entry per open #if: whether its current branch needs GNU extensions
    for number, line in enumerate(code_lines(path), 1):
        m = DIRECTIVE.match(line)
        kind, rest = (m.group(1), m.group(2)) if m else (None, "")
        if kind in ("if", "ifdef"):
            stack.append(is_gnu_condition(rest, gnu_macros))
        elif kind == "ifndef":
            stack.append(False)
        elif kind == "elif" and stack:
            stack[-1] = is_gnu_condition(rest, gnu_macros)
        elif kind == "else" and stack:
            stack[-1] = False
        elif kind == "endif" and stack:
            stack.pop()
        on_line(number, line, any(stack), kind, rest)


def main(folders):
    files = [p for f in folders for p in sorted(pathlib.Path(f).rglob("*")) if p.suffix in (".hpp", ".cpp")]
    # Macros defined only in GNU branches stand for them in other conditions.
    defined_outside, gnu_macros = set(), set()
    for _ in range(3):  # derived from derived ones too
        for path in files:
            def collect(number, line, guarded, kind, rest):
                if kind == "define":
                    name = rest.split("(")[0].split()[0]
                    (gnu_macros if guarded else defined_outside).add(name)
            walk(path, gnu_macros - defined_outside, collect)
    gnu_macros -= defined_outside
    problems = []
    for path in files:
        if path.as_posix().endswith(HOME):
            continue

        def check(number, line, guarded, kind, rest):
            if not guarded and kind is None and EXTENSION.search(line):
                problems.append(f"{path}:{number}: {line.strip()}")
        walk(path, gnu_macros, check)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} uses of GNU extensions outside `#if TABLIO_GNU_EXTENSIONS`: MSVC rejects them")
        return 1
    print(f"{len(files)} files: GNU extensions only where TABLIO_GNU_EXTENSIONS holds ({', '.join(sorted(gnu_macros))})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
