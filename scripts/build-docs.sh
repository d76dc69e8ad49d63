#!/usr/bin/env bash
# Builds the documentation site into OUT/site (default build/docs/site): the Markdown guides in
# docs/ with MkDocs, and the API reference from the headers with Doxygen under site/api. Fails
# on a Doxygen warning, a MkDocs warning, and any broken link or anchor in the result.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/build/docs}" && cd "${1:-$root/build/docs}" && pwd)
"$root/scripts/ensure-packages.sh" mkdocs doxygen python3

# The guides and the generated reference are staged together, so that links between them
# are checked like any other.
rm -rf "$out/staged" "$out/site"
cp -r "$root/docs" "$out/staged"
(cd "$root" && TABLIO_API_OUTPUT="$out/staged" doxygen scripts/docs/Doxyfile)
mv "$out/staged/doxygen-warnings.txt" "$out/"
if [ -s "$out/doxygen-warnings.txt" ]; then
  echo "doxygen warnings:" && cat "$out/doxygen-warnings.txt" && exit 1
fi
(cd "$root" && TABLIO_DOCS_DIR="$out/staged" mkdocs build --strict --quiet --site-dir "$out/site")
python3 "$root/scripts/docs/check_links.py" "$out/site"
echo "documentation site: $out/site/index.html"
