"""MkDocs hooks for tablio's site (mkdocs.yml names this file).

- A class or type alias the C++ reference documents, named in a guide's code span (`table_writer`,
  `tablio::holder<T>`, `sequential_table_reader<H>`), links to its page in the reference. The
  names come from Doxygen's tag file, which scripts/build-docs.sh writes and names in
  TABLIO_DOXYGEN_TAGS; without it (plain `mkdocs serve` on docs/) no links are added.
- pybind11 starts a compiled function's docstring with its signature
  ("get(self: tablio._tablio.RandomAccessReader, key: handle, default: object = None) -> object",
  Markdown making __x__ bold): the reference shows it as code, without self.
- Docstrings list their parameters as "name: what it is" lines with indented continuations;
  each such line starts on a line of its own, its name as code.
- A pipe in a code span in a table is written `\\|` in Markdown, so that the table renders on
  any Markdown reader; on the site it shows as `|`, so that what is copied works.
"""
import html
import os
import re
import xml.etree.ElementTree as ET

CODE_SPAN = re.compile(r"<code>([^<]*)</code>")
LINK_OR_BLOCK = re.compile(r"<a\b[^>]*>.*?</a>|<pre\b.*?</pre>", re.S)
CLASS_NAME = re.compile(r"^(?:tablio::)?((?:kaldi::|remote::)?[A-Za-z_]\w*)(?:<[^()]*>)?$")

_classes = {}  # "table_writer" or "kaldi::Matrix" -> its page under api/ (a type alias's anchor)


def on_config(config):
    _classes.clear()
    tags = os.environ.get("TABLIO_DOXYGEN_TAGS")
    if tags and os.path.exists(tags):
        for compound in ET.parse(tags).getroot().iter("compound"):
            if compound.get("kind") == "namespace" and compound.findtext("name") == "tablio":
                for member in compound.findall("member"):  # type aliases: datum, raw_little...
                    if member.get("kind") == "typedef":
                        _classes.setdefault(member.findtext("name"),
                                            f"{member.findtext('anchorfile')}#{member.findtext('anchor')}")
            if compound.get("kind") not in ("class", "struct", "union"):
                continue
            name = compound.findtext("name") or ""
            if not name.startswith("tablio::") or "detail" in name.split("::") or "<" in name:
                continue
            _classes[name[len("tablio::"):]] = compound.findtext("filename")
    return config


# Class names that are also the words guides use for other things (a tar member's extension,
# a value type's name): linked only when written tablio::example and so on.
COMMON_WORDS = {"example", "sample", "image", "range", "limits", "wave"}


def _linked(match, root):
    text = html.unescape(match.group(1))
    named = CLASS_NAME.match(text)
    if named and named.group(1) in COMMON_WORDS and not text.startswith("tablio::"):
        return match.group(0)
    page = _classes.get(named.group(1)) if named else None
    if not page:
        return match.group(0)
    return f'<a href="{root}api/{page}" title="C++ reference">{match.group(0)}</a>'


PYBIND_SIGNATURE = re.compile(r"<p>(?:<strong>)?(\w+)(?:</strong>)?\(self: tablio\._tablio\.\w+(?:, )?([^<]*)</p>")


def _signature(match):
    name = match.group(1)
    if not name.startswith("_") and match.group(0).find("<strong>") >= 0:
        name = f"__{name}__"  # Markdown's bold ate the underscores
    return f"<p><code>{name}({match.group(2)}</code></p>"


PARAMETER_LINE = re.compile(r"(^|<p>)([a-z_][a-z_0-9]*(?:, [a-z_][a-z_0-9]*)*): ", re.M)


def _parameter(match):
    names = ", ".join(f"<code>{name}</code>" for name in match.group(2).split(", "))
    return f"{match.group(1) or '<br>'}{names}: "


def on_page_content(content, page, config, files):
    content = PYBIND_SIGNATURE.sub(_signature, content)
    if "doc-object" in content:  # a page of mkdocstrings' reference
        content = PARAMETER_LINE.sub(_parameter, content)
    root = "../" * page.file.url.count("/")  # the way from the page's folder to the site's root
    content = CODE_SPAN.sub(lambda m: m.group(0).replace("\\|", "|"), content)
    if not _classes:
        return content
    out, last = [], 0
    for skip in LINK_OR_BLOCK.finditer(content):  # code in links and blocks stays as it is
        out.append(CODE_SPAN.sub(lambda m: _linked(m, root), content[last:skip.start()]))
        out.append(skip.group(0))
        last = skip.end()
    out.append(CODE_SPAN.sub(lambda m: _linked(m, root), content[last:]))
    return "".join(out)

