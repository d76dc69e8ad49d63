#!/usr/bin/env python3
"""Fails when the built site would mislead a reader in ways a link checker cannot see.

    check_site.py SITE_DIR

- api/index.html is the C++ reference's main page (Doxygen's), the guides' reference page
  links to it, and it links back to the guides;
- the C++ reference has its symbol search, and every guide page has the site's search;
- the guides link class names to their reference pages (at least the table classes);
- no code on any page shows `\\|`, which would be copied as a backslash and a pipe.
"""
import html
import os
import re
import sys


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main():
    site = os.path.abspath(sys.argv[1])
    problems = []

    main_page = os.path.join(site, "api", "index.html")
    if not os.path.exists(main_page) or "doxygen" not in read(main_page).lower():
        problems.append("api/index.html is not the C++ reference's main page")
    elif 'href="../index.html"' not in read(main_page):
        problems.append("the C++ reference's main page does not link back to the guides")
    reference = os.path.join(site, "cpp-reference.html")
    if not os.path.exists(reference) or 'href="api/index.html"' not in read(reference):
        problems.append("cpp-reference.html does not link to the C++ reference's main page")
    if not os.path.exists(os.path.join(site, "api", "search", "search.js")):
        problems.append("the C++ reference has no symbol search (api/search/search.js)")
    if not os.path.exists(os.path.join(site, "search", "search_index.json")):
        problems.append("the site has no search index")

    linked = set()
    for folder, _, files in os.walk(site):
        for name in files:
            if not name.endswith(".html"):
                continue
            path = os.path.join(folder, name)
            text = read(path)
            for code in re.findall(r"<code[^>]*>(.*?)</code>", text, re.S):
                if "\\|" in html.unescape(re.sub(r"<[^>]+>", "", code)):
                    problems.append(f"{os.path.relpath(path, site)}: code shows \\| : {code[:80]!r}")
            if not os.path.relpath(path, site).startswith("api" + os.sep):
                linked.update(re.findall(r'href="api/(class[^"#]+\.html)"', text))
    for page in ("classtablio_1_1table__writer.html", "classtablio_1_1sequential__table__reader.html",
                 "classtablio_1_1random__access__table__reader.html"):
        if page not in linked:
            problems.append(f"no guide links to api/{page}")

    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
