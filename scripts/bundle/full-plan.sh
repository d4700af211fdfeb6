#!/bin/sh
# full-plan.sh: the plan of gpu-check's full mode, every step with its estimated seconds, from records.
#
#   full-plan.sh SPEEDLAB [--frameworks found|all] RECORDS...
#   full-plan.sh --collect SOURCE_ROOT DEST
#
# SPEEDLAB is the speedlab to ask for the studies, variants, sizes and parameter defaults (`speedlab
# list`, no device visible); RECORDS are results files or folders of them (every *.jsonl below): earlier
# records of the same cases (a GPU node's check, a CPU page's run). --frameworks all plans the framework
# GPU rows (torch-cuda, jax-gpu) whether or not this machine's python has them (what a node with them
# would run: the plan printed before a window is booked); found (the default) only those it has.
# --collect copies the records the plan rests on from a source tree into DEST (gpu-bundle.sh: the
# bundle's share/speedlab/plan-records): the GPU node's check in GPU_PAGE and the kernel studies' CPU
# rows of CPU_PAGE (docs/results/NAME/results; a page with the node's own CPU rows is better, when one
# is made, and the node's own full check brought home is best: gpu-check.sh --records).
# Prints a line per step, most important first, tab-separated:
#   NAME  SECONDS  BASIS  ARGS...    (ARGS: what to give speedlab, e.g. run STUDY --variants A,B ...)
#
# The steps: the calibration; per study its own GPU rows with torch-cuda's at the write-ups' sizes, and
# for the kernel studies (entropy_mi, tensor_mean) their CPU rows at the same sizes (all the node's
# cores: speedlab's default threads) so that the crossover tables have both sides; mlp and cnn on the
# full training set for EPOCHS_mlp and EPOCHS_cnn epochs; precision, galaxy (max_iter 300) and h2d at
# their defaults; a study not named here at its defaults; jax-gpu's rows last (least telling: torch-cuda
# is the framework row the tables compare with).
#
# The estimate of a case: its overhead (what the records show from its start to the next case's beyond
# its timed calls: the check against the CPU reference, an interpreter's start, the next inputs) plus
# (warm-up + repetitions) x its time per repetition. The time comes from the record of the same study,
# variant and size, else the largest recorded size below it (else the smallest above) scaled linearly
# by size, epochs and training rows (a --quick record: one epoch on its rows); a variant without a
# record takes the slowest recorded variant of its kind in that study. Repetitions: a GPU kernel row gets
# --min-time long enough for a median within about 2 % (1.25 s/sqrt(n), s the records' (median - min) /
# median), at most the CPU rows' 0.2 s (GPU medians are steady); a CPU row speedlab's defaults (at
# least 5, 0.2 s); a training row one repetition (its epochs give the per-epoch series). Each step adds
# its study's start-up (from a run's start, or another study's last case, to its first case). Without a
# record: a guess, said so in the step's basis. Exit 0; 1 when SPEEDLAB lists no study; 2 bad arguments.
set -u
EPOCHS_mlp=10   # of the write-up's 40: per-epoch times, and an accuracy past its first epochs' rise
EPOCHS_cnn=5    # of the write-up's 10
CALIBRATE_GUESS=30   # seconds, without a calibration record (CPU and GPU ceilings)
GPU_PAGE=h200-gpu-check
CPU_PAGE=zen3-avx2

bad() {
    echo "full-plan: error: $*" >&2
    echo "usage: full-plan.sh SPEEDLAB [--frameworks found|all] [RECORDS...] | --collect SOURCE_ROOT DEST  (--help says more)" >&2
    exit 2
}
for a in "$@"; do case $a in -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac; done
case ${1:-} in
    --collect) ;;
    ''|-*) bad "want SPEEDLAB (a program) or --collect, not '${1:-}'" ;;
    *) [ -f "$1" ] && [ -x "$1" ] || bad "SPEEDLAB '$1' is not a program" ;;
esac
if [ "${1:-}" = --collect ]; then
    [ $# -eq 3 ] || bad "--collect wants SOURCE_ROOT DEST"
    mkdir -p "$3/$GPU_PAGE" || exit 1
    cp -R "$2/docs/results/$GPU_PAGE/results/." "$3/$GPU_PAGE/" || exit 1
    grep -hE '"study":"(entropy_mi|tensor_mean)"' "$2/docs/results/$CPU_PAGE/results/results.jsonl" |
        grep '"status":"ok"' >"$3/$CPU_PAGE-kernels.jsonl" || exit 1
    exit 0
fi

sl=$1
shift
fw=found
if [ "${1:-}" = --frameworks ]; then
    case ${2:-} in found|all) fw=$2 ;; *) bad "--frameworks wants found or all" ;; esac
    shift 2
fi
records() { # every record of RECORDS, a file's records together (a run's gaps are read in order)
    for r in "$@"; do
        if [ -d "$r" ]; then find "$r" -name '*.jsonl' -type f -exec sh -c 'for f; do cat "$f"; echo; done' _ {} +
        elif [ -f "$r" ]; then cat "$r"; echo; fi
    done
}

# The studies as speedlab lists them, no device visible: "L STUDY KIND VARIANT" (KIND own: a CUDA
# variant; fw: a framework GPU row, torch-cuda or jax-gpu; cpu: the study's own CPU variant), "S STUDY
# SIZE...", "P STUDY NAME DEFAULT". A framework row whose python lacks the framework says "cannot
# import": planned with --frameworks all only.
listing() {
    CUDA_VISIBLE_DEVICES='' "$sl" list 2>/dev/null | awk -v fw="$fw" '
        /^[a-z_0-9]+:/ { s = $1; sub(":", "", s); inparams = 0; next }
        /^  sizes \(/ { line = $0; sub(/^[^:]*: */, "", line); gsub(/,/, "", line); print "S", s, line; next }
        /^  params:/ { inparams = 1; next }
        inparams && /^    [a-z_]+ +default / { print "P", s, $1, $3; next }
        /^    [a-z]/ && !inparams {
            if ($2 ~ /^cuda:/) print "L", s, "own", $1
            else if ($2 ~ /^python:/ && $1 ~ /-(cuda|gpu)$/ && ($2 ~ /@[a-z]*:/ || fw == "all")) print "L", s, "fw", $1
            else if ($2 !~ /^python:/) print "L", s, "cpu", $1
        }'
}

lst=$(listing)
[ -n "$lst" ] || { echo "full-plan: '$sl list' named no study (not speedlab, or it does not start here)" >&2; exit 1; }
{ printf '%s\nEND\n' "$lst"; records "$@"; } | awk -v em="$EPOCHS_mlp" -v ec="$EPOCHS_cnn" -v calguess="$CALIBRATE_GUESS" '
function str(k) { if (match($0, "\"" k "\":\"([^\"\\\\]|\\\\.)*\"")) return substr($0, RSTART + length(k) + 4, RLENGTH - length(k) - 5); return "" }
function num(k) { if (match($0, "\"" k "\":-?[0-9][0-9.eE+-]*")) return substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3) + 0; return "" }
function secs(t) { # ISO 8601 UTC to seconds within a month (a gap across a month end is dropped)
    return ((substr(t, 9, 2) * 24 + substr(t, 12, 2)) * 60 + substr(t, 15, 2)) * 60 + substr(t, 18, 2) }
function ceil(x) { return x == int(x) ? x : int(x) + 1 }
function max(a, b) { return a > b ? a : b }
# the listing
!done && $1 == "L" { kind[$2, $4] = $3; vars[$2, $3] = vars[$2, $3] (vars[$2, $3] == "" ? "" : ",") $4
                     if (!($2 in seen)) { seen[$2] = 1; order[++ns] = $2 }; next }
!done && $1 == "S" { sizes[$2] = $0; sub(/^S [^ ]+ /, "", sizes[$2]); next }
!done && $1 == "P" { pdef[$2, $3] = $4; next }
!done && $1 == "END" { done = 1; next }
# The records: per case its time per repetition and spread; per run the gaps between the start times
# of its cases (a record "time"): from the run start to its first case, and from the last case of a study to
# the first of the next, a start-up of that study; from one case to the next of the same study, the first
# one overhead beyond its timed calls (its check, the inputs of the next size)
/"kind":"calibration"/ { if (str("time") != "" && str("date") != "") cal = max(cal, secs(str("time")) - secs(str("date"))); next }
/"kind":"case"/ {
    id = str("run_id"); t = secs(str("time")); s = str("study"); v = str("variant")
    if (id != run) { run = id; pv = ""; o = t - secs(str("date")); if (o >= 0) startup[s] = max(startup[s], o) }
    else if (pv != "" && t >= pt) {
        o = t - pt - ptimed; if (o < 0) o = 0
        if (ps != s) startup[s] = max(startup[s], o); else over[ps, pv] = max(over[ps, pv], o)
    }
    pt = t; ps = s; pv = ""
    if (str("status") != "ok") next
    med = num("median_s"); n = num("reps"); w = num("warmup"); sz = num("size")
    if (med == "" || med <= 0) next
    pv = v; ptimed = (n + w) * med
    # what one repetition covered: epochs and training rows (a --quick record: one epoch on its rows)
    why = str("reduced_reason"); e = str("epochs") != "" ? str("epochs") + 0 : 1; rows = 1
    if (str("train_rows") != "") { rows = str("train_rows") + 0; if (rows == 0) rows = 60000 }
    if (match(why, /one epoch on [0-9]+ training rows/)) { e = 1; rows = substr(why, RSTART + 13, RLENGTH - 27) + 0 }
    k = s SUBSEP v SUBSEP sz; u = med / (e * rows)   # per epoch and row: a quick record compares
    if (!(k in tper)) rsz[s, v] = rsz[s, v] " " sz
    if (!(k in tper) || u > tper[k]) { tper[k] = u; spread[k] = (med - num("min_s")) / med }   # the slowest
    next
}
# the time per repetition of a planned case, from the nearest recorded size of the variant (scaled)
function tcase(s, v, size, ep, rows,   m, i, best, lo, k) {
    m = split(rsz[s, v], rs, " "); best = ""; lo = ""
    for (i = 1; i <= m; i++) {
        if (rs[i] + 0 <= size && (best == "" || rs[i] + 0 > best)) best = rs[i] + 0
        if (rs[i] + 0 > size && (lo == "" || rs[i] + 0 < lo)) lo = rs[i] + 0
    }
    if (best != "") { k = s SUBSEP v SUBSEP best; sp = spread[k]; return tper[k] * ep * rows * size / best }
    if (lo != "") { k = s SUBSEP v SUBSEP lo; sp = spread[k]; return tper[k] * ep * rows }
    return ""
}
# "SECONDS<TAB>BASIS<TAB>ARGS" for a speedlab run of the variants of STUDY of KINDS (own,fw | cpu), or ONLY
function plan(s, kinds, only,   nk, kk, i, j, nv, vv, v, list, ep, rows, nz, t, tt, o, est, cases, guessed, mt, need, training, args) {
    list = ""
    nk = split(kinds, kk, ",")
    for (i = 1; i <= nk; i++) if (vars[s, kk[i]] != "") list = list (list == "" ? "" : ",") vars[s, kk[i]]
    if (only != "") list = only
    if (list == "") return ""
    training = ((s, "epochs") in pdef) || ((s, "max_iter") in pdef)
    ep = 1; if (((s, "epochs") in pdef)) ep = (s == "mlp" ? em : s == "cnn" ? ec : pdef[s, "epochs"])
    rows = ((s, "train_rows") in pdef) ? 60000 : 1
    nz = split(sizes[s], zs, " "); nv = split(list, vv, ",")
    # min-time of a GPU kernel step: enough repetitions of its cases for a median within 2 %, <= 0.2 s
    mt = 0
    if (!training && kinds != "cpu") for (i = 1; i <= nv; i++) for (j = 1; j <= nz; j++) {
        t = tcase(s, vv[i], zs[j], 1, 1); if (t == "") continue
        need = (1.25 * sp / 0.02) ^ 2; if (need < 5) need = 5
        mt = max(mt, need * t)
    }
    if (mt > 0.2) mt = 0.2
    est = 0; cases = 0; guessed = 0
    for (i = 1; i <= nv; i++) for (j = 1; j <= nz; j++) {
        v = vv[i]; t = tcase(s, v, zs[j], ep, rows); o = over[s, v]
        if (t == "") { # no record of this variant: the slowest recorded one of its kind
            for (vk in kind) { split(vk, p, SUBSEP); if (p[1] != s || kind[vk] != kind[s, v]) continue
                tt = tcase(s, p[2], zs[j], ep, rows); if (tt != "" && (t == "" || tt > t)) { t = tt; o = max(o, over[s, p[2]]) } }
        }
        if (t == "") { t = 1; o = 5; guessed++ }
        if (o == "") o = 2
        if (training) est += o + t                                  # one repetition, no warm-up
        else est += o + (1 + max(5, ceil((kinds == "cpu" ? 0.2 : mt) / t))) * t
        cases++
    }
    est += (s in startup) ? startup[s] : 10
    args = "run " s " --variants " list (mt > 0 ? sprintf(" --min-time %.3g", mt) : "")
    if (s == "mlp" || s == "cnn") args = args " --param epochs=" ep
    return sprintf("%d\t%d case%s%s%s\t%s", ceil(est), cases, cases == 1 ? "" : "s", guessed ? ", " guessed " without a record (guessed)" : "",
                   mt > 0 ? sprintf(", min-time %.3g s", mt) : "", args)
}
function emit(name, line) { if (line != "") printf "%s\t%s\n", name, line }
END {
    printf "calibrate\t%d\t%s\tcalibrate\n", (cal > 0 ? cal : calguess), (cal > 0 ? "a calibration record" : "no calibration record: guessed")
    split("entropy_mi tensor_mean mlp cnn precision galaxy h2d", named, " ")
    for (i = 1; i <= 7; i++) named_[named[i]] = 1
    for (i = 1; i <= 7; i++) {
        s = named[i]; if (!(s in seen)) continue
        fwl = ""; n = split(vars[s, "fw"], f, ","); for (j = 1; j <= n; j++) if (f[j] !~ /^jax/) fwl = fwl (fwl == "" ? "" : ",") f[j]
        own = vars[s, "own"] (vars[s, "own"] != "" && fwl != "" ? "," : "") fwl
        emit(s "-gpu", plan(s, "own,fw", own))
        if (s == "entropy_mi" || s == "tensor_mean") emit(s "-cpu", plan(s, "cpu"))
    }
    for (i = 1; i <= ns; i++) { s = order[i]; if (!(s in named_) && vars[s, "own"] != "") emit(s "-gpu", plan(s, "own,fw")) }
    for (i = 1; i <= ns; i++) {
        s = order[i]; jl = ""; n = split(vars[s, "fw"], f, ","); for (j = 1; j <= n; j++) if (f[j] ~ /^jax/) jl = jl (jl == "" ? "" : ",") f[j]
        if (jl != "") emit(s "-jax", plan(s, "fw", jl))
    }
}'
