#!/bin/sh
# SPEEDLAB_DATA_DIR, through the real speedlab: without --data, galaxy reads DIR/galaxy and the training
# studies DIR/fashion-mnist (the GPU bundle's launcher sets it to the bundle's data). A folder without
# the files makes the case "unavailable" with a reason naming that folder; with galaxy's files there the
# case runs; --data still wins. Usage: SPEEDLAB SOURCE_ROOT OUTDIR
set -u
sl=$1 src=$2 out=$3
rm -rf "$out"
mkdir -p "$out/empty" "$out/full" || exit 1
ln -s "$src/data/galaxy" "$out/full/galaxy"
fails=0
# case_says DATA_DIR STUDY VARIANT WANT [ARGS...]: the case's line on stdout must say WANT
case_says() {
    d=$1 study=$2 v=$3 want=$4
    shift 4
    line=$(SPEEDLAB_DATA_DIR=$d "$sl" run "$study" --quick --variants "$v" --reps 1 --out "$out/runs" "$@" 2>&1 |
        grep "^$study ")
    case $line in
        *"$want"*) echo "ok: SPEEDLAB_DATA_DIR=$d $study $*: $line" ;;
        *) echo "FAIL: SPEEDLAB_DATA_DIR=$d $study $*: want '$want' in: $line"; fails=$((fails + 1)) ;;
    esac
}
case_says "$out/empty" galaxy default "unavailable: galaxy: no train.csv[.gz] and test.csv[.gz] in $out/empty/galaxy"
case_says "$out/empty" mlp simd "unavailable: mlp: no Fashion-MNIST in $out/empty/fashion-mnist"
case_says "$out/full" galaxy simd " ok"
case_says "$out/empty" galaxy simd " ok" --data "$src/data/galaxy"
rm -rf "$out"
exit $fails
