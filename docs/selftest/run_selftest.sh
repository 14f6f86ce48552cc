#!/usr/bin/env bash
# The page converter's self-test: turns docs/selftest/repo into a site with Doxygen
# (warnings are errors) and checks its links.
#   run_selftest.sh <python> <doxygen> <build folder holding the configured Doxyfile>
set -eu
python=$1 doxygen=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
cd "$out"
"$python" "$here/../build_pages.py" --repo "$here/repo" --out "$out/generated"
rm -rf "$out/html"
"$doxygen" Doxyfile
"$python" "$here/../check_links.py" "$out/html"
test -f "$out/html/chapter01.html" || { echo "selftest: no chapter01.html"; exit 1; }
grep -q "has not been written yet" "$out/html/chapter02.html" || { echo "selftest: no placeholder page"; exit 1; }
test -f "$out/html/chapter01_tiling.html" || { echo "selftest: no page for 01_torture/tiling.md"; exit 1; }
grep -q 'href="chapter01_tiling.html#chapter01_tiling_a_section_with_code"' "$out/html/chapter01.html" \
  || { echo "selftest: a link to a section of another page does not lead to its anchor"; exit 1; }
grep -q 'href="glossary.html"' "$out/html/chapter01.html" || { echo "selftest: no glossary link in the navigation"; exit 1; }
if grep -l "&lt;tt&gt;" "$out"/html/*.html; then echo "selftest: <tt> shown as text"; exit 1; fi
# A link to a section that does not exist fails the conversion, naming the link.
broken=$(mktemp -d)
trap 'rm -rf "$broken"' EXIT
cp -r "$here/repo/." "$broken"
echo "[gone](#no-such-section)" >>"$broken/01_torture/README.md"
if "$python" "$here/../build_pages.py" --repo "$broken" --out "$broken/generated" 2>"$broken/err"; then
  echo "selftest: a link to a missing section was not refused"; exit 1
fi
grep -q "#no-such-section, but no heading there has that anchor" "$broken/err" \
  || { echo "selftest: the refusal does not name the link"; cat "$broken/err"; exit 1; }
echo "selftest: passed"
