#!/usr/bin/env python3
"""Doxygen input filter: tablio's headers document themselves with plain // comments, which
Doxygen ignores. This turns the ones that document something into Doxygen comments:

  - the comment that opens a header describes the file (\\file);
  - a comment block just before a declaration at namespace or class scope documents it;
  - a trailing comment on a member (`int x;  // why`) documents that member;
  - classes nested in another's private part are left out (\\cond);
  - a class with no comment of its own that the header's opening comment names first (as in
    "tablio::reader: the buffered input...") is documented by that comment.

Comments inside function bodies stay plain. Lines are never added or removed, so Doxygen's
line numbers still match the header.
"""
import re
import sys

HEAD_WORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b")
ACCESS = re.compile(r"^\s*(public|private|protected)\s*:")
SECTION = re.compile(r"^\s*//\s*-{3,}")  # "// ----- archives": a heading, not a description
NOT_DECLARATIONS = re.compile(r"^\s*(#|TABLIO_BEGIN_NAMESPACE|TABLIO_END_NAMESPACE|public:|private:|protected:|return\b|if\b|for\b|while\b|"
                              r"switch\b|case\b|default:|do\b|else\b|throw\b|static_assert\b|\}|$)")


ANGLE = re.compile(r"<(?=[A-Za-z_])")


def described(line):
    """A // line made a Doxygen one: "<cmath>" or "holder<T>" is text, not an HTML tag, and
    "e.g. " does not end the brief description."""
    parts = line.replace("//", "///", 1).split("`")
    return "`".join(ANGLE.sub("&lt;", p).replace(">::", ">\\::").replace("e.g. ", "e.g.\\ ")
                    .replace("i.e. ", "i.e.\\ ") if i % 2 == 0 else p
                    for i, p in enumerate(parts))


INDENTED = re.compile(r"^\s*//   ")  # "//   code" or a table laid out in columns


def describe_block(lines, block):
    """Makes a comment block a description. Its indented lines (code examples, tables laid out
    in columns) are kept as they are, in code blocks; lines are never added."""
    runs, start = [], None
    for k, i in enumerate(block):
        if INDENTED.match(lines[i]):
            start = k if start is None else start
        elif start is not None:
            runs.append((start, k - 1))
            start = None
    if start is not None:
        runs.append((start, len(block) - 1))
    verbatim = {block[k] for first, last in runs for k in range(first, last + 1)}
    for i in block:
        lines[i] = lines[i].replace("//", "///", 1) if i in verbatim else described(lines[i])
    for first, last in runs:
        if first > 0:
            lines[block[first - 1]] += " \\code{.unparsed}"
        else:
            lines[block[first]] = lines[block[first]].replace("///", "/// \\code{.unparsed}", 1)
        lines[block[last]] += " \\endcode"


FORWARD = re.compile(r"^\s*(class|struct|union)\s+\w+\s*;")


def forward_declaration(lines, n):
    """Whether line n starts a declaration of a class without its definition (class matrix;),
    whose comment says why it is declared there, not what the class is."""
    while n < len(lines) and lines[n].lstrip().startswith("template"):
        n += 1
    return n < len(lines) and bool(FORWARD.match(lines[n]))


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


def without_template_heads(head):
    """The head without its template <...> parameter lists, whose default arguments (= T) and
    constraints would make a class look like a function or a variable."""
    out, depth, i = [], 0, 0
    while i < len(head):
        if depth == 0 and head.startswith("template", i):
            j = head.find("<", i)
            if j >= 0 and head[i + 8:j].strip() == "":
                depth, i = 1, j + 1
                continue
        if depth:
            depth += {"<": 1, ">": -1}.get(head[i], 0)
        else:
            out.append(head[i])
        i += 1
    return "".join(out)


class Scope:
    """An open brace: a type (namespace, class, struct...) or anything else (a body)."""

    def __init__(self, head):
        head = without_template_heads(head)
        words = HEAD_WORDS.findall(head)
        # What follows the last keyword: "struct sint {" is a type, also after a requires(...)
        # clause; "void f(class x) {" and "auto x = struct ... {" are not.
        last = list(HEAD_WORDS.finditer(head))
        rest = head[last[-1].end():] if last else head
        self.is_type = bool(words) and "(" not in rest and "=" not in head.split("requires")[0]
        self.is_class = self.is_type and words[-1] in ("class", "struct", "union")
        self.access = "private" if words and words[-1] == "class" else "public"
        self.hidden = False  # a class nested in another's private part


IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
CLASS_NAME = re.compile(r"\b(?:class|struct|union)\s+(?:\w+\s+)*?([A-Za-z_]\w*)\s*(?:final\s*)?(?::[^:]|\{|$)")


def opening_names(text):
    """The names a header's opening comment starts by describing: "tablio::reader: ..." or
    "table_writer<Holder, Framing>: ..." name reader and table_writer."""
    named = re.match(r"((?:[\w<>, ]|::)+):(?!:)", text)
    first = named.group(1) if named else ""
    return set(IDENTIFIER.findall(re.sub(r"<[^>]*>", "", first))) - {"tablio"}


def main():
    path = sys.argv[1]
    lines = open(path, encoding="utf-8").read().split("\n")
    header = path.replace("\\", "/").split("include/", 1)[-1]
    described_by_opening = set()
    block_end = -2      # the last line of the last comment block made a description
    decl_start = None   # the line the declaration being read started on
    documented = False  # whether a comment documents the declaration being read
    scopes = []         # the braces open at this point
    head = ""           # code since the last ';', '{' or '}': what an opening brace belongs to
    block = []          # indexes of the // lines of the comment block being read
    seen_code = False   # whether anything but comments came yet: the opening comment is the file's
    continued = False   # whether this line continues a preprocessor line

    for n, line in enumerate(lines):
        stripped = line.lstrip()
        between = head.strip() == ""  # no declaration is being read
        if block and not seen_code and stripped.startswith("#"):  # the file's opening comment
            described_by_opening = opening_names(lines[block[0]].lstrip()[2:].strip())
            describe_block(lines, block)
            lines[block[-1]] += " \\file"  # at a line's end, \file names the current file
            seen_code = True
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
        if block and SECTION.match(lines[block[0]]):  # a heading, then what describes the declaration
            block = block[1:]
        if block:
            if not seen_code:
                describe_block(lines, block)
                lines[block[-1]] += " \\file"  # at a line's end, \file names the current file
            elif in_type_scope and not NOT_DECLARATIONS.match(line) and not forward_declaration(lines, n):
                describe_block(lines, block)
                documented, block_end = True, n - 1
            block = []
        if stripped and between:
            decl_start = n
            documented = documented and n == block_end + 1
        if stripped:
            seen_code = True
        code = code_of(line)
        trailing = line[len(code):]
        if (in_type_scope and (not scopes or scopes[-1].is_type) and code.rstrip().endswith(";")
                and trailing.lstrip().startswith("//") and not trailing.lstrip().startswith("///")):
            lines[n] = code + trailing.replace("//", "///<", 1)
        for c in code:
            if c == "{":
                named = CLASS_NAME.search(head)
                if (named and named.group(1) in described_by_opening and not documented and in_type_scope
                        and decl_start is not None):
                    described_by_opening.discard(named.group(1))
                    lines[decl_start] = "/** \\copydoc " + header + " */ " + lines[decl_start]
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
