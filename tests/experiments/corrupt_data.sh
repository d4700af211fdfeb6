#!/bin/sh
# tests/experiments/corrupt_data.sh SPEEDLAB WORKDIR: a data set that cannot be trusted is a failed case
# with the reader's message in every study that reads it, never a memory skip or a hang.
#   - an IDX image header with a valid magic whose dimensions promise 12.9 GB over a 76-byte file:
#     pipeline (whose memory estimate reads the header) and mlp both fail with the reader's message;
#   - a FIFO where the images file is expected: both fail at once, "not a regular file"; so do galaxy's
#     CSV, report's results file, plan's --calibration and slurm --resubmit's cases file (no hang).
set -u
sl=$1
w=$2
rm -rf "$w"
mkdir -p "$w/big" "$w/fifo"
fails=0
be32() { printf "\\$(printf %03o $(($1 >> 24 & 255)))\\$(printf %03o $(($1 >> 16 & 255)))\\$(printf %03o $(($1 >> 8 & 255)))\\$(printf %03o $(($1 & 255)))"; }
{ be32 2051; be32 60000; be32 463; be32 463; head -c 60 /dev/zero; } >"$w/big/train-images-idx3-ubyte"
{ be32 2049; be32 5; printf '\001\002\003\004\005'; } >"$w/big/train-labels-idx1-ubyte"
cp "$w/big/train-images-idx3-ubyte" "$w/big/t10k-images-idx3-ubyte"
cp "$w/big/train-labels-idx1-ubyte" "$w/big/t10k-labels-idx1-ubyte"
cp "$w/big/"*labels* "$w/big/t10k-images-idx3-ubyte" "$w/fifo/"
mkfifo "$w/fifo/train-images-idx3-ubyte"

# expect DIR STUDY VARIANT WANT: the run exits 1 within 60 s, its record failed and saying WANT
expect() {
    timeout 60 "$sl" run "$2" --quick --variants "$3" --data "$w/$1" --out "$w/out-$1-$2" >"$w/log" 2>&1
    rc=$?
    rec="$w/out-$1-$2/latest/results.jsonl"
    if [ $rc -ne 1 ]; then
        echo "FAIL: $2 on $1: exit $rc, want 1 (124: it hung)"; cat "$w/log"; fails=$((fails + 1))
    elif ! grep -q '"status":"failed"' "$rec" || ! grep -qF -- "$4" "$rec"; then
        echo "FAIL: $2 on $1: no failed record saying '$4':"; cat "$rec"; fails=$((fails + 1))
    else
        echo "ok: $2 on $1: failed, '$4'"
    fi
}
expect big pipeline gzip "expected 12862140000 bytes of image data, found 60"
expect big mlp simd "expected 12862140000 bytes of image data, found 60"
expect fifo pipeline gzip "not a regular file"
expect fifo mlp simd "not a regular file"
mkdir -p "$w/gal" "$w/res/run-x" "$w/sub"
mkfifo "$w/gal/train.csv.gz" "$w/gal/test.csv.gz" "$w/res/run-x/results.jsonl" "$w/calib.jsonl" "$w/sub/cases.tsv"
expect gal galaxy default "not a regular file"
# within60 WANT_RC WANT_TEXT ARGS...: speedlab ARGS exits WANT_RC within 60 s, saying WANT_TEXT
within60() {
    want=$1 text=$2
    shift 2
    timeout 60 "$sl" "$@" >"$w/log" 2>&1
    rc=$?
    if [ $rc -ne "$want" ] || ! grep -qF -- "$text" "$w/log"; then
        echo "FAIL: speedlab $*: exit $rc (want $want; 124: it hung), output:"; cat "$w/log"; fails=$((fails + 1))
    else
        echo "ok: speedlab $*: exit $rc, '$text'"
    fi
}
within60 1 "not a regular file" report "$w/res" --out "$w/rep" --no-plots
within60 1 "not a regular file" report "$w/res/run-x/results.jsonl" --out "$w/rep" --no-plots
within60 0 "no calibration" plan tensor_mean --quick --calibration "$w/calib.jsonl"
within60 2 "not a regular file" slurm --resubmit "$w/sub"
[ $fails -eq 0 ]
