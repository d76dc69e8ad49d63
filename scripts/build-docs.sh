#!/usr/bin/env bash
# Builds the documentation site into OUT/site (default build/docs/site): the Markdown guides in
# docs/ with MkDocs (the Material theme), the Python reference from the package's docstrings and
# stubs, and the C++ reference from the headers with Doxygen under site/api. Fails on a Doxygen
# or MkDocs warning, a public C++ name without a description, a broken link or anchor, and code
# that would be copied wrong.
#
#   scripts/build-docs.sh [OUT [PYTHON_DIR]]
#
# PYTHON_DIR holds a built tablio package (the folder with tablio/_tablio*.so, as the CMake
# build's python/ folder does): the reference shows the compiled classes' docstrings from it.
# Without it, the first build/*/python that has one is used.
# Serve the result with: python3 -m http.server -d OUT/site (search needs it served).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/build/docs}" && cd "${1:-$root/build/docs}" && pwd)
"$root/scripts/ensure-packages.sh" mkdocs mkdocs-material python3-pymdownx mkdocstrings \
  mkdocstrings-python-handlers doxygen python3
python_dir=${2:-}
if [ -z "$python_dir" ]; then
  for built in "$root"/build/*/python/tablio/_tablio*.so; do
    [ -e "$built" ] && python_dir=$(dirname "$(dirname "$built")") && break
  done
fi
if [ -z "$python_dir" ] || ! ls "$python_dir"/tablio/_tablio*.so > /dev/null 2>&1; then
  echo "build-docs.sh: no built tablio Python package (PYTHON_DIR): build the python module first" >&2
  exit 1
fi

# The guides and the generated reference are staged together, so that links between them
# are checked like any other.
rm -rf "$out/staged" "$out/site"
cp -r "$root/docs" "$out/staged"
cp "$root/CHANGELOG.md" "$out/staged/changelog.md"
(cd "$root" && TABLIO_API_OUTPUT="$out/staged" doxygen scripts/docs/Doxyfile)
mv "$out/staged/doxygen-warnings.txt" "$out/staged/tablio.tag" "$out/"
rm -rf "$out/doxygen-xml" && mv "$out/staged/doxygen-xml" "$out/"
if [ -s "$out/doxygen-warnings.txt" ]; then
  echo "doxygen warnings:" && cat "$out/doxygen-warnings.txt" && exit 1
fi
python3 "$root/scripts/docs/check_reference.py" "$out/doxygen-xml"
(cd "$root" && TABLIO_DOCS_DIR="$out/staged" TABLIO_DOXYGEN_TAGS="$out/tablio.tag" \
   TABLIO_PYTHON_SOURCES="$python_dir" mkdocs build --strict --quiet --site-dir "$out/site")
python3 "$root/scripts/docs/check_links.py" "$out/site"
python3 "$root/scripts/docs/check_site.py" "$out/site"
echo "documentation site: $out/site/index.html (serve it: python3 -m http.server -d $out/site)"
