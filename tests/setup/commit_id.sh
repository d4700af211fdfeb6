#!/bin/sh
# scripts/commit-id.sh: where a build finds its commit, each source in turn on a scratch tree: git (clean,
# then an edited tracked file), .git read without git, a tarball's COMMIT file, a commit given at setup,
# none (unknown, with the reason), and a tarball unpacked inside another clone (not that clone's commit).
# TAP output. Usage: commit_id.sh SOURCE_ROOT
set -u
id=$1/scripts/commit-id.sh
command -v git >/dev/null || { echo "1..0 # SKIP no git to make the scratch history with"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commit-id.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
is() { n=$((n + 1)); if [ "$2" = "$3" ]; then echo "ok $n - $1"; else failed=1; echo "not ok $n - $1"; echo "#   got:  $2"; echo "#   want: $3"; fi; }
echo "1..8"
r=$tmp/tree
mkdir -p "$r" && echo a >"$r/f"
git -C "$r" init -q && git -C "$r" add f &&
    git -C "$r" -c user.name=t -c user.email=t@t -c commit.gpgsign=false commit -q -m one || exit 1
h=$(git -C "$r" rev-parse HEAD) s=$(git -C "$r" rev-parse --short HEAD)
is "git, clean" "$(sh "$id" c "$r")" "\"$h\", 0, \"git\", \"\", \"$s\""
echo b >"$r/f"
is "git, an edited tracked file: dirty" "$(sh "$id" c "$r")" "\"$h\", 1, \"git\", \"\", \"$s-dirty\""
# no git on PATH: only the tools the script needs
bin=$tmp/bin && mkdir -p "$bin" && for t in sh sed cat awk; do ln -s "$(command -v $t)" "$bin/$t"; done
is ".git read without git: the commit, dirtiness unknown" "$(PATH=$bin sh "$id" c "$r" | cut -d, -f1-3)" "\"$h\", -1, \"git-dir\""
git -C "$r" pack-refs --all
is ".git with packed refs, without git" "$(PATH=$bin sh "$id" c "$r" | cut -d, -f1-3)" "\"$h\", -1, \"git-dir\""
t=$tmp/tarball && mkdir -p "$t" && printf 'commit %s\ndirty 0\n' "$h" >"$t/COMMIT"
is "a tarball's COMMIT file" "$(sh "$id" c "$t")" "\"$h\", 0, \"dist\", \"\", \"\""
rm "$t/COMMIT"
is "given at setup" "$(sh "$id" c "$t" abc1234 | cut -d, -f1-3)" "\"abc1234\", -1, \"setup\""
is "none: unknown, with the reason" "$(sh "$id" c "$t" | cut -d, -f1-3)" "\"unknown\", -1, \"none\""
mkdir -p "$r/unpacked"
is "a tarball unpacked inside a clone is not that clone's commit" "$(sh "$id" c "$r/unpacked" | cut -d, -f1)" "\"unknown\""
exit $failed
