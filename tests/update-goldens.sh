#!/bin/sh
# update-goldens.sh BUILD SOURCE_ROOT TEST_REPORT SPEEDLAB: what `ninja -C BUILD update-goldens` runs.
# Writes the golden files the tests compare with (tests/reports/golden by the report test with
# --update-golden, tests/slurm/golden by test_plan.sh --update), then shows what changed: a person reads
# `git diff` of those folders and commits only what is meant. A test run (meson test, CI) never writes.
set -u
build=$1 src=$2 test_report=$3 speedlab=$4
say() { printf 'update-goldens: %s\n' "$*" >&2; }
say "tests/reports/golden (the report test, --update-golden)"
SPEEDLAB_SOURCE_ROOT=$src "$test_report" --update-golden >"$build/update-goldens-reports.log" 2>&1 ||
    say "the report test failed beside the golden files (not only a difference): see $build/update-goldens-reports.log"
say "tests/slurm/golden (test_plan.sh --update)"
bash "$src/tests/slurm/test_plan.sh" "$speedlab" "$src/tests/slurm/golden" --update >"$build/update-goldens-slurm.log" 2>&1 ||
    say "test_plan.sh had failures beside the golden files: see $build/update-goldens-slurm.log"
if command -v git >/dev/null && git -C "$src" rev-parse -q --verify HEAD >/dev/null 2>&1; then
    changed=$(git -C "$src" status --porcelain -- tests/reports/golden tests/slurm/golden)
    if [ -z "$changed" ]; then
        say "no golden file changed"
    else
        git -C "$src" status --short -- tests/reports/golden tests/slurm/golden >&2
        say "review: git -C $src diff -- tests/reports/golden tests/slurm/golden; commit only what is meant"
    fi
else
    say "no git here: compare the golden folders with a copy by hand before using them"
fi
