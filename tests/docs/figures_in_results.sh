#!/bin/sh
# tests/docs/figures_in_results.sh ROOT: a measured figure lives in docs/results, and prose links it.
#
# A time or a rate depends on the machine that measured it; the page that holds it (docs/results/...)
# says which machine, commit and command. So in README.md and docs/*.md (docs/results/ is left out) a
# number with a time or rate unit (ns, µs, ms, s, GB/s, GFLOP/s, ×, %) is a hit unless
#   - it sits in code (a fenced or indented block, or a `span`): commands and their sample output;
#   - a bound word comes just before it (at most, at least, under, below, above, within, up to, over,
#     default, goal, every, after, <, >, <=, >=) or a limit word just after it (limit, budget, cap, timeout):
#     a limit, not a measurement; "N × M" is a size;
#   - its paragraph links a page under docs/results (the figure is quoted from there);
#   - its paragraph (or list item, table) holds a text listed for its file in tests/docs/figures_allowed.txt,
#     each entry with the reason its figures are not measurements (a budget, a threshold, a fixture's
#     worked example, arithmetic, a write-up's own figure).
# An allowed text no longer in its file fails too. Each hit is printed as FILE:LINE: FIGURE: TEXT. Exit 0 none found, 1 found (or ROOT unreadable).
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 1
allowed=tests/docs/figures_allowed.txt
[ -r "$allowed" ] || { echo "figures_in_results: $allowed is missing" >&2; exit 1; }

hits=$(mktemp) || exit 1
trap 'rm -f "$hits"' EXIT
for md in README.md docs/*.md; do
    [ -f "$md" ] || continue
    awk -v file="$md" -v allowed="$allowed" '
        BEGIN {
            n = 0
            while ((getline line < allowed) > 0) {
                if (line ~ /^#/ || line !~ / \| /) continue
                f = line; sub(/ \| .*/, "", f)
                rest = substr(line, length(f) + 4)
                t = rest; sub(/ \| .*/, "", t)
                if (f == file && t != "") ok[++n] = t
            }
            unit = "(ns|µs|us|ms|s|min|GB/s|GiB/s|MB/s|GFLOP/s|TFLOP/s|GFLOPS|×|%)"
            num = "[0-9][0-9.,]*([eE][-+]?[0-9]+)?"
            bound = "(at most|at least|under|below|above|within|up to|over|default|goal|every|after|<|>|<=|>=|≤|≥) *$"
        }
        function flush(   i, j, hit) {
            if (np == 0) { para = ""; return }
            gsub(/[ \t]+/, " ", para)                          # an allowed text may span lines
            if (para !~ /\]\([^)]*results\//) {
                for (i = 1; i <= np; i++) {
                    hit = 0
                    for (j = 1; j <= n; j++) if (index(para, ok[j])) hit = 1
                    if (!hit) print file ":" pl[i] ": " pf[i] ": " raw[i]
                }
            }
            np = 0; para = ""
        }
        function scan(text, lineno, orig,   s, pre, fig, before) {
            s = text
            while (match(s, num " ?" unit)) {
                pre = substr(s, 1, RSTART - 1)
                fig = substr(s, RSTART, RLENGTH)
                after = substr(s, RSTART + RLENGTH, 1)
                s = substr(s, RSTART + RLENGTH)
                if (pre ~ /[A-Za-z0-9_.\/-]$/) continue          # part of a word or a name
                if (after ~ /[A-Za-z0-9_]/) continue            # "5 steps", "3s3"
                if (fig ~ /×$/ && s ~ /^ ?[0-9]/) continue       # a size, "1050 × 720 px"
                if (s ~ /^ (limit|budget|cap|timeout)/) continue  # "a 60 s limit"
                before = pre; sub(/[ (]*$/, "", before)
                if ((before " ") ~ bound || pre ~ bound) continue
                np++; pl[np] = lineno; pf[np] = fig; raw[np] = orig
            }
        }
        /^[ \t]*(```|~~~)/ { fence = !fence; flush(); next }
        fence { next }
        /^[ \t]*$/ { flush(); blank = 1; code = 0; next }
        {
            if (blank && np == 0 && para == "" && $0 ~ /^    / && $0 !~ /^ *([-*+]|[0-9]+\.) /) code = 1
            blank = 0
            if (code) next
            if ($0 ~ /^ *([-*+]|[0-9]+\.) /) flush()              # a list item is a block of its own
            para = para " " $0
            t = $0
            gsub(/`[^`]*`/, "", t)                              # code spans
            gsub(/\]\([^)]*\)/, "]", t)                         # link targets
            scan(t, NR, $0)
        }
        END { flush() }
    ' "$md" >>"$hits"
done

# An entry whose text is no longer in its file is stale: the list stays as short as the docs need.
grep -v '^#' "$allowed" | grep ' | ' | while IFS= read -r entry; do
    f=${entry%% | *}
    t=${entry#* | }
    t=${t%% | *}
    [ -f "$f" ] && tr -s ' \n\t' '   ' <"$f" | grep -qF -- "$t" || echo "$allowed: stale entry, not in $f: $t"
done >>"$hits"

if [ -s "$hits" ]; then
    cat "$hits"
    echo "figures_in_results: $(wc -l <"$hits") hit(s). A measured figure: link the docs/results page" \
        "that holds it, or drop it. A bound, a default or a worked example: list it with its reason in" \
        "$allowed. A stale entry: remove it." >&2
    exit 1
fi
exit 0
