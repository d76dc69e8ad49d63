#!/usr/bin/env python3
"""Fails when a page of the built site links to a file or an anchor that is not there.

    check_links.py SITE_DIR

Every href and src of every HTML page is checked, except links that leave the site
(http:, https:, mailto:, javascript:). A link to a directory means its index.html.
"""
import html.parser
import os
import sys
import urllib.parse


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.anchors = [], set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.anchors.add(value)
            elif name in ("href", "src") and value is not None:
                self.links.append(value)


def main():
    site = os.path.abspath(sys.argv[1])
    pages = {}
    for root, _, files in os.walk(site):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(root, name)
                page = Page()
                with open(path, encoding="utf-8", errors="replace") as f:
                    page.feed(f.read())
                pages[path] = page
    broken = []
    checked = 0
    for path, page in pages.items():
        for link in page.links:
            parsed = urllib.parse.urlsplit(link)
            if parsed.scheme or link.startswith("//"):
                continue
            checked += 1
            target = path
            if parsed.path:
                # A path from the root (as in MkDocs' 404 page) starts at the site's root.
                base = site if parsed.path.startswith("/") else os.path.dirname(path)
                target = os.path.normpath(os.path.join(base, urllib.parse.unquote(parsed.path).lstrip("/")))
                if os.path.isdir(target):
                    target = os.path.join(target, "index.html")
                if not target.startswith(site + os.sep) or not os.path.exists(target):
                    broken.append("%s: %s (no such file)" % (os.path.relpath(path, site), link))
                    continue
            fragment = urllib.parse.unquote(parsed.fragment)
            if fragment and target in pages and fragment not in pages[target].anchors:
                broken.append("%s: %s (no such anchor)" % (os.path.relpath(path, site), link))
    for line in broken:
        print(line)
    print("%d pages, %d links checked, %d broken" % (len(pages), checked, len(broken)))
    return 1 if broken or not pages else 0


if __name__ == "__main__":
    sys.exit(main())
