#!/usr/bin/env bash
# Where a test run's time went, from the JUnit XML reports surefire and failsafe wrote: a markdown
# summary per report directory, then the slowest classes and the slowest tests.
#
#   hack/test-times.sh [-n N] [DIR...]
#
# N rows per table (default 30). DIRs default to target/surefire-reports and target/failsafe-reports
# (those that exist); a class's time is its report's (set-up and tear-down included), a test's is
# its own. `.ci/run` prints the slowest 15 after every run, failed or not.
set -euo pipefail
cd "$(dirname "$0")/.."

top=30
if [ "${1:-}" = -n ]; then top="$2"; shift 2; fi
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  for d in target/surefire-reports target/failsafe-reports; do [ -d "$d" ] && dirs+=("$d"); done
fi
reports=()
for d in "${dirs[@]}"; do
  for f in "$d"/TEST-*.xml; do [ -f "$f" ] && reports+=("$f"); done
done
if [ ${#reports[@]} -eq 0 ]; then
  echo "test-times: no TEST-*.xml reports under ${dirs[*]:-target} (run the tests first)" >&2
  exit 1
fi

# One line per class (C) and per test (T), tab-separated: kind, seconds, class, tests/name, outcome.
awk '
  function attr(tag, name,   m) {
    if (match(tag, " " name "=\"[^\"]*\"")) { m = substr(tag, RSTART + length(name) + 3, RLENGTH - length(name) - 4); return m }
    return ""
  }
  function unescape(s) { gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s); gsub(/&apos;/, "\047", s); gsub(/&amp;/, "\\&", s); return s }
  function seconds(s) { gsub(/,/, "", s); return s + 0 }
  function flush() {
    if (tc == "") return
    printf "T\t%s\t%.3f\t%s\t%s\t%s\n", kind, tt, tclass, tname, outcome
    tc = ""
  }
  FNR == 1 { flush(); kind = (FILENAME ~ /failsafe/) ? "IT" : "unit" }
  /<testsuite / {
    fails = attr($0, "failures") + attr($0, "errors")
    printf "C\t%s\t%.3f\t%s\t%d\t%s\n", kind, seconds(attr($0, "time")), unescape(attr($0, "name")), attr($0, "tests"), (fails > 0 ? "FAILED" : "")
  }
  /<testcase / {
    flush()
    tc = $0; tt = seconds(attr($0, "time")); tclass = unescape(attr($0, "classname")); tname = unescape(attr($0, "name")); outcome = ""
    if ($0 ~ /\/>[[:space:]]*$/) flush()
  }
  tc != "" && /<(failure|error)[ >\/]/ { outcome = "FAILED" }
  tc != "" && /<skipped[ >\/]/ { outcome = "skipped" }
  tc != "" && /<flakyFailure|<flakyError|<rerunFailure/ { outcome = "flaky" }
  /<\/testcase>/ { flush() }
  END { flush() }
' "${reports[@]}" > "${TMPDIR:-/tmp}/test-times.$$"
trap 'rm -f "${TMPDIR:-/tmp}/test-times.$$"' EXIT
rows="${TMPDIR:-/tmp}/test-times.$$"

short() { sed -E 's/(^|\t)dev\.cks\.nodeops\./\1/'; }
secs() { awk -F'\t' -v c="$1" '{ $c = sprintf("%.1f", $c); print }' OFS='\t'; }

# Wall time of a kind: from the first class's start (its report's mtime less its time) to the last report
# written. With several forks it is less than the classes' sum.
for f in "${reports[@]}"; do
  printf 'W\t%s\t%s\t%s\n' "$(case "$f" in *failsafe*) echo IT ;; *) echo unit ;; esac)" "$(stat -c %Y "$f")" \
    "$(grep -m1 -o '<testsuite [^>]*' "$f" | grep -o ' time="[^"]*"' | tr -dc '0-9.')"
done >> "$rows"
echo "| kind | classes | tests | failed | class time (sum, m:ss) | wall (m:ss) |"
echo "|---|---:|---:|---:|---:|---:|"
awk -F'\t' '$1 == "C" { n[$2]++; t[$2] += $3 } $1 == "T" { k[$2]++; if ($6 == "FAILED") f[$2]++ }
  $1 == "W" { if (!($2 in last) || $3 > last[$2]) last[$2] = $3; s = $3 - $4; if (!($2 in first) || s < first[$2]) first[$2] = s }
  END { for (x in n) { w = last[x] - first[x]; printf "| %s | %d | %d | %d | %d:%02d | %d:%02d |\n", x, n[x], k[x], f[x], int(t[x] / 60), t[x] % 60, int(w / 60), w % 60 } }' "$rows" | sort -r
echo
echo "Slowest $top classes:"
echo
echo "| class | kind | tests | time (s) | |"
echo "|---|---|---:|---:|---|"
awk -F'\t' '$1 == "C"' "$rows" | sort -t$'\t' -k3,3gr | head -n "$top" | short | secs 3 \
  | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $4, $2, $5, $3, $6 }'
echo
echo "Slowest $top tests:"
echo
echo "| class | test | kind | time (s) | |"
echo "|---|---|---|---:|---|"
awk -F'\t' '$1 == "T"' "$rows" | sort -t$'\t' -k3,3gr | head -n "$top" | short | secs 3 \
  | awk -F'\t' '{ gsub(/\|/, "\\|", $5); printf "| %s | %s | %s | %s | %s |\n", $4, $5, $2, $3, $6 }'
