#!/bin/sh
# tests/docs/help_matches_reference.sh SPEEDLAB ROOT: the reference (docs/speedlab.md, and
# docs/reports.md for report and compare) and the commands' --help agree.
#   1. every flag a command's --help defines (an indented "--flag" line, or "[--flag" in its usage
#      line) is documented in the reference, as `--flag`;
#   2. every flag the reference documents in a table row (| `--flag ...` |) is one that some command's
#      --help defines;
#   3. every SPEEDLAB_ variable a --help names is in the reference, and every SPEEDLAB_ or PROF_
#      variable in the reference's environment table is read somewhere in the sources.
# Each mismatch is printed; exit 1 if any, 0 if none.
set -u
sl=$1
root=$2
ref=$root/docs/speedlab.md
bad=0
miss() { echo "$*"; bad=$((bad + 1)); }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

: >"$tmp/all"
for cmd in list run calibrate tune plan slurm report compare; do
    "$sl" "$cmd" --help >"$tmp/help" 2>&1 || { miss "speedlab $cmd --help exits $?"; continue; }
    { grep -oE '^ +(-[a-z], )?--[a-z][a-z0-9-]*' "$tmp/help"; grep -E '^usage:' "$tmp/help" | grep -oE '\[--[a-z][a-z0-9-]*'; } |
        grep -oE -- '--[a-z][a-z0-9-]*' | sort -u >"$tmp/flags"
    cat "$tmp/flags" >>"$tmp/all"
    docs=$ref
    case $cmd in report|compare) docs="$ref $root/docs/reports.md" ;; esac
    while read -r f; do
        [ "$f" = --help ] && continue
        # shellcheck disable=SC2086  # docs: one or two files
        grep -qF -- "\`$f" $docs || miss "speedlab $cmd --help defines $f; the reference ($docs) does not document it"
    done <"$tmp/flags"
    grep -oE 'SPEEDLAB_[A-Z_]+' "$tmp/help" | sort -u | while read -r v; do
        grep -qF "$v" "$ref" || echo "speedlab $cmd --help names $v; docs/speedlab.md does not"
    done >>"$tmp/envmiss"
done
[ -s "$tmp/envmiss" ] && { cat "$tmp/envmiss"; bad=$((bad + 1)); }
sort -u "$tmp/all" -o "$tmp/all"
grep -oE '^\| `--[a-z][a-z0-9-]*' "$ref" | sed 's/^| `//' | sort -u | while read -r f; do
    grep -qxF -- "$f" "$tmp/all" || echo "docs/speedlab.md documents $f in a table; no command's --help defines it"
done >"$tmp/rowmiss"
[ -s "$tmp/rowmiss" ] && { cat "$tmp/rowmiss"; bad=$((bad + 1)); }
# the environment table: | `VAR` | rows, each read somewhere in the code
awk '/^## Environment variables/ {e = 1; next} e && /^## / {exit} e' "$ref" | grep -oE '`(SPEEDLAB|PROF)_[A-Z_]+`' |
    tr -d '`' | sort -u | while read -r v; do
    grep -rqF "$v" "$root/experiments" "$root/reports" "$root/profiler" "$root/kernels" "$root/scripts" "$root/baselines" ||
        echo "docs/speedlab.md's environment table names $v; no source reads it"
done >"$tmp/varmiss"
[ -s "$tmp/varmiss" ] && { cat "$tmp/varmiss"; bad=$((bad + 1)); }
[ $bad -eq 0 ] && echo "ok: --help and the reference agree ($(wc -l <"$tmp/all") flags)"
[ $bad -eq 0 ]
