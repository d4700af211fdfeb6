#!/bin/sh
# scripts/results-stale.sh and results-page.sh's commit rule on a planted history: a scratch git repository
# with three pages, one made before its study's kernel changed (stale), one after (current), one whose
# records name no commit (an error); and `results-page.sh add` refusing a run whose records name none.
# TAP output. Usage: results_stale.sh SOURCE_ROOT
set -u
src=$1
command -v git >/dev/null || { echo "1..0 # SKIP no git"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/results-stale.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; sed 's/^/#   /' "$tmp/out"; }
echo "1..6"

r=$tmp/repo
mkdir -p "$r/scripts" "$r/kernels/alpha" "$r/kernels/beta" "$r/docs/results"
cp "$src/scripts/results-stale.sh" "$src/scripts/results-page.sh" "$r/scripts/"
g() { git -C "$r" -c user.name=t -c user.email=t@t -c commit.gpgsign=false "$@"; }
g init -q
echo 1 >"$r/kernels/alpha/a.c"; echo 1 >"$r/kernels/beta/b.c"
g add -A && g commit -q -m one
one=$(g rev-parse HEAD)
rec() { printf '{"kind":"case","env":{"commit":"%s"},"study":"%s"}\n' "$1" "$2"; }
page() { mkdir -p "$r/docs/results/$1/results"; cat >"$r/docs/results/$1/results/results.jsonl"; }
rec "$one" alpha | page old-alpha
rec "$one" beta | page old-beta
echo 2 >"$r/kernels/alpha/a.c"
g add -A && g commit -q -m "alpha: a faster kernel"
two=$(g rev-parse HEAD)
rec "$two" alpha | page new-alpha
printf '{"kind":"case","env":{"commit":"unknown"},"study":"alpha"}\n' | page nameless

sh "$r/scripts/results-stale.sh" old-alpha >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "^old-alpha: stale: .*alpha: 1 commit since $(printf %.7s "$one") (latest $(printf %.7s "$two") alpha: a faster kernel)" "$tmp/out"
then ok "a page made before its kernel changed is stale (exit 1)"; else not_ok "a page made before its kernel changed is stale (exit $rc)"; fi

sh "$r/scripts/results-stale.sh" old-beta new-alpha >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "^old-beta: current" "$tmp/out" && grep -q "^new-alpha: current" "$tmp/out"
then ok "pages whose studies did not change since are current"; else not_ok "pages whose studies did not change since are current (exit $rc)"; fi

sh "$r/scripts/results-stale.sh" --warn old-alpha nameless >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "^nameless: error: 1 of 1 records name no commit" "$tmp/out" && grep -q "^old-alpha: stale" "$tmp/out"
then ok "--warn lists a stale page, and a page naming no commit still fails"; else not_ok "--warn: stale listed, no commit fails (exit $rc)"; fi

printf 'commit %s\ninferred: made from a clone of it\n' "$one" >"$r/docs/results/nameless/COMMIT"
sh "$r/scripts/results-stale.sh" nameless >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "^nameless: stale: made from $(printf %.7s "$one") \[its COMMIT file: inferred\]" "$tmp/out"
then ok "records without a commit take the page's COMMIT file, and say so"; else not_ok "a page's COMMIT file (exit $rc)"; fi

mkdir -p "$tmp/run"
{ rec "$two" alpha; printf '{"kind":"case","env":{"host":"h"},"study":"alpha"}\n'; } >"$tmp/run/results.jsonl"
SPEEDLAB=/bin/true sh "$r/scripts/results-page.sh" add "$tmp/run" fresh >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "1 records name no commit" "$tmp/out" && [ ! -d "$r/docs/results/fresh" ]
then ok "results-page.sh add refuses a run whose records name no commit"; else not_ok "add refuses records without a commit (exit $rc)"; fi

rm -rf "$r/.git"
sh "$r/scripts/results-stale.sh" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 77 ] && grep -q "not a git work tree" "$tmp/out"
then ok "no git history: exit 77 saying why"; else not_ok "no git history: exit 77 (exit $rc)"; fi
exit $failed
