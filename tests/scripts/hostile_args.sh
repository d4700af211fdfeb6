#!/bin/sh
# tests/scripts/hostile_args.sh SOURCE_ROOT SPEEDLAB: every script of scripts/ and scripts/bundle/ (and
# what the GPU bundle carries: the launcher, the .run header, gpu-check.sh) run with the same hostile
# arguments, in a scratch copy of the repository, with the results printed as a table (TAP).
#
# Each row puts one value of the hostile set (--help, -h, --bogus, '', '..', '../x', a folder whose path
# has a space, a leading-zero number, a huge number) in one argument slot of one script, and wants:
#   help     exit 0 and the usage on stdout
#   refused  exit 2 and a "usage:" line on stderr
#   error    exit 2 and a message (the launcher: speedlab's own refusal)
#   ran:N    the value is a good one there: exit N, having got no further than the stand-in named
# and in every case that no file of the scratch tree changed but the row's own output folder, and that
# no stand-in ran for help or a refusal: apt-get, dpkg, sudo, meson, ninja, clang, nvcc, patchelf,
# debootstrap, chroot, mount, umount and git are stand-ins on PATH that record their call and exit 99,
# so nothing is installed, built or mounted. A script in scripts/ with no row fails the test (sourced
# libraries are named apart). Exit 0 passed, 1 failed.
set -u
src=$(cd "$1" && pwd)
speedlab=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")   # meson gives it relative to the build folder
tmp=$(mktemp -d "${TMPDIR:-/tmp}/speedlab-hostile.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
mkdir -p "$log" "$tmp/standin" "$tmp/tmpdir" "$tmp/cwd" "$tmp/out" "$tmp/sp ace" "$tmp/some/dir/report"

# ---- the scratch tree -----------------------------------------------------------------------------
r=$tmp/repo
mkdir -p "$r/docs/results/demo/results" "$r/docs/results/demo/report"
cp -R "$src/scripts" "$r/scripts"
cp "$src/README.md" "$r/"
echo '{"kind":"case"}' >"$r/docs/results/demo/results/results.jsonl"
echo "# demo" >"$r/docs/results/demo/report/REPORT.md"
echo keep >"$tmp/some/dir/report/keep.txt"     # what `render ../../../some/dir` would remove
run=$tmp/run                                    # a run directory, for the NAME slot of `add`
mkdir -p "$run" && echo '{"kind":"case"}' >"$run/results.jsonl"
mkdir -p "$tmp/mnist"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    : >"$tmp/mnist/$f"
done
# a fake GPU bundle (gpu-check.sh's steps run on tests/bundle/fake/speedlab) and its .run file
b=$tmp/bundle/speedlab-gpu
mkdir -p "$b/bin" "$b/lib" "$b/share/speedlab/plots" "$b/share/speedlab/data"
cp "$src/scripts/gpu-check.sh" "$src/scripts/bundle/speedlab" "$b/"
cp "$src/scripts/bundle/find-cuda-libs.sh" "$src/scripts/bundle/check-libs.sh" "$b/share/speedlab/"
cp "$src/tests/bundle/fake/speedlab" "$b/bin/speedlab"
printf '#!/bin/sh\nexit 0\n' >"$b/bin/test_good_cuda"
cp /bin/true "$b/bin/true"      # an ELF for the library check
chmod +x "$b"/bin/* "$b/gpu-check.sh" "$b/speedlab"
cat >"$b/BUNDLE" <<'INFO'
SL_BUNDLE_SOURCE='fixture'
SL_BUNDLE_BUILT='never'
SL_BUNDLE_CUDA_RUNTIME='13000 (static)'
SL_CUDNN_SONAME='libc.so.6'
SL_SONAMES='libc.so.6'
SL_GLIBC_MIN='2.17'
SL_CUDA_TESTS='test_good_cuda'
SL_RACECHECK_TESTS='test_good_cuda'
INFO
mkdir -p "$tmp/pay"
tar -C "$tmp/bundle" -cf "$tmp/pay/speedlab-gpu.tar.xz" speedlab-gpu   # "xz" below is cat
{ cat "$src/scripts/bundle/run-header.sh"; tar -C "$tmp/pay" -cf - .; } >"$tmp/speedlab-gpu.run"
rm -rf "$tmp/pay"
# the launcher, on the real speedlab
l=$tmp/lbundle
mkdir -p "$l/bin" "$l/share/speedlab"
cp "$src/scripts/bundle/speedlab" "$l/"
cp "$src/scripts/bundle/find-cuda-libs.sh" "$l/share/speedlab/"
cp "$b/BUNDLE" "$l/"
ln -s "$speedlab" "$l/bin/speedlab"

for s in apt-get dpkg sudo meson ninja clang nvcc patchelf debootstrap chroot mount umount git; do
    printf '#!/bin/sh\necho %s >>"%s/calls"\nexit 99\n' "$s" "$log" >"$tmp/standin/$s"
done
printf '#!/bin/sh\n[ "$1" = -dc ] && exec cat "$2"\nexit 99\n' >"$tmp/standin/xz"
chmod +x "$tmp/standin"/*

# listing: every path of the scratch tree with its type and, for a file, its checksum; not the test's own
# logs, the scripts' TMPDIR or the row's output folder (emptied after each row)
listing() {
    find "$tmp" \( -path "$log" -o -path "$tmp/tmpdir" \) -prune -o -type f -exec md5sum {} + | sort
    find "$tmp" \( -path "$log" -o -path "$tmp/tmpdir" \) -prune -o ! -type f -printf '%y %p\n' | sort
}

# ---- the table ------------------------------------------------------------------------------------
# SCRIPT|ARGS (sh words; $V is the value)|the outcome for each value, in the order of the set:
#         --help -h --bogus '' .. ../x "$SP" 010 $HUGE  (ran:N:STANDIN:V: the value is the output folder)
HUGE=99999999999999999999
SP="$tmp/sp ace"
H="help help"
R9="refused refused refused refused refused refused refused"
cat >"$tmp/table" <<EOF
scripts/results-page.sh|"\$V"|$H $R9
scripts/results-page.sh|add "\$run" "\$V"|$H $R9
scripts/results-page.sh|add "\$V" page|$H $R9
scripts/results-page.sh|add-gpu "\$V" page|$H $R9
scripts/results-page.sh|add-gpu "\$run" "\$V"|$H $R9
scripts/results-page.sh|render "\$V"|$H $R9
scripts/results-page.sh|check "\$V"|$H $R9
scripts/setup.sh|"\$V"|$H refused refused refused ran:99:dpkg ran:99:dpkg ran:99:dpkg ran:99:dpkg
scripts/setup.sh|build "\$V"|$H $R9
scripts/setup.sh|--slurm "\$V" build|$H $R9
scripts/gpu-check.sh|"\$V"|$H $R9
scripts/gpu-check.sh|--budget "\$V"|$H $R9
scripts/gpu-check.sh|--budget 60 --out "\$V"|$H refused refused refused ran:3:-:V ran:3:-:V ran:3:-:V ran:3:-:V
scripts/bundle/run-header.sh|"\$V"|$H $R9
scripts/bundle/run-header.sh|check "\$V"|$H $R9
scripts/bundle/speedlab|"\$V"|$H error error error error error error error
scripts/bundle/check-libs.sh|"\$V"|$H $R9
scripts/bundle/check-libs.sh|--needs "\$V"|$H $R9
scripts/fresh-check.sh|"\$V"|$H $R9
scripts/fresh-check.sh|--main "\$V"|$H $R9
scripts/gpu-bundle-selftest.sh|"\$V"|$H $R9
scripts/gpu-bundle.sh|"\$V"|$H $R9
scripts/gpu-bundle.sh|--fashion-mnist "\$tmp/mnist" --out "\$V"|$H refused refused refused ran:1:meson:V ran:1:meson:V ran:1:meson:V ran:1:meson:V
scripts/gpu-bundle.sh|--out "\$tmp/out" --build "\$V"|$H refused refused refused ran:1:meson ran:1:meson ran:1:meson ran:1:meson
scripts/gpu-bundle.sh|--fashion-mnist "\$V"|$H $R9
scripts/fuzz.sh|"\$V"|$H $R9
scripts/fuzz.sh|60 "\$V"|$H refused refused refused ran:1:meson ran:1:meson ran:1:meson ran:1:meson
scripts/fuzz.sh|60 "\$tmp/out" "\$V"|$H $R9
scripts/isa_dispatch.py|"\$V"|$H $R9
scripts/isa_dispatch.py|rename "\$V" "\$run/results.jsonl" "\$tmp/out/x.a"|$H $R9
scripts/testcount.py|"\$V"|$H refused refused ran:1 ran:1 ran:1 ran:1 ran:1
scripts/commit-id.sh|"\$V"|$H $R9
scripts/bundle/full-plan.sh|"\$V"|$H $R9
scripts/nsys-install.sh|"\$V"|$H $R9
scripts/results-stale.sh|"\$V"|$H $R9
EOF
# the issue's reproducers, each a row of its own: SCRIPT|ARGS|OUTCOME
cat >"$tmp/cases" <<EOF
scripts/results-page.sh|add "\$run" ..|refused
scripts/results-page.sh|render ../../../some/dir|refused
scripts/setup.sh|--help|help
scripts/setup.sh|-h|help
scripts/setup.sh|--slurn|refused
scripts/setup.sh|--slurm=yes|refused
scripts/setup.sh|build extra|refused
scripts/gpu-check.sh|--budget 090|refused
scripts/gpu-check.sh|--budget 0100|refused
scripts/gpu-check.sh|--out "\$SP" --budget 60 extra|refused
EOF
sourced="scripts/debian-root.sh scripts/bundle/find-cuda-libs.sh"
set -- --help -h --bogus '' .. ../x "$SP" 010 "$HUGE"
{
    while IFS='|' read -r script args outcomes; do
        i=0
        for v in "$@"; do
            i=$((i + 1))
            printf '%s|%s|%s|%s\n' "$script" "$args" "$v" "$(echo "$outcomes" | cut -d' ' -f$i)"
        done
    done <"$tmp/table"
    while IFS='|' read -r script args outcome; do printf '%s|%s||%s\n' "$script" "$args" "$outcome"; done <"$tmp/cases"
} >"$tmp/rows"

missing=""
for f in "$src"/scripts/* "$src"/scripts/bundle/*; do
    [ -f "$f" ] || continue
    rel=${f#"$src"/}
    case " $sourced " in *" $rel "*) continue ;; esac
    grep -q "^$rel|" "$tmp/table" || missing="$missing $rel"
done

echo "1..$(($(wc -l <"$tmp/rows") + 4))"
echo "# not run (sourced, no arguments): $sourced; T is the scratch root, the working folder T/cwd"
printf '# %-3s %-30s %-62s %-26s %s\n' "" script arguments want got
n=0 fails=0
listing >"$log/before"
while IFS='|' read -r script args v want; do
    n=$((n + 1))
    case $script in
        scripts/bundle/run-header.sh) exe=$tmp/speedlab-gpu.run interp=sh ;;
        scripts/bundle/speedlab) exe=$l/speedlab interp=sh ;;
        scripts/gpu-check.sh) exe=$b/gpu-check.sh interp=bash ;;
        *) exe=$r/$script; interp=$(head -n 1 "$exe" | sed 's/^#! *//') ;;
    esac
    # shellcheck disable=SC2034 # V is read by the eval below
    V=$v
    eval "set -- $args"
    shown=$(for a in "$@"; do case $a in *[!A-Za-z0-9_./=-]* | '') printf "'%s' " "$a" ;; *) printf '%s ' "$a" ;; esac; done |
        sed -e "s|$tmp|T|g")
    rm -f "$log/calls"
    # the value as an output folder: made by the script or there before (the empty folder with a space)
    outdir=""
    case $want in *:V) case $v in /*) outdir=$v ;; *) outdir=$tmp/cwd/$v ;; esac ;; esac
    # shellcheck disable=SC2086
    (cd "$tmp/cwd" && PATH="$tmp/standin:$PATH" TMPDIR=$tmp/tmpdir SPEEDLAB=$speedlab FAKE_ALL_OK=1 \
        timeout 120 $interp "$exe" "$@" </dev/null >"$log/out" 2>"$log/err")
    rc=$?
    called=$(head -n 1 "$log/calls" 2>/dev/null)
    got="exit $rc${called:+, $called called}"
    bad=""
    case $want in
        help) [ $rc -eq 0 ] && [ -s "$log/out" ] || bad="want exit 0 with the usage on stdout" ;;
        refused) [ $rc -eq 2 ] && grep -qi '^usage: ' "$log/err" || bad="want exit 2 with a usage: line on stderr" ;;
        error) [ $rc -eq 2 ] && [ -s "$log/err" ] || bad="want exit 2 with a message" ;;
        ran:*)
            w=${want#ran:}
            [ $rc -eq "${w%%:*}" ] || bad="want exit ${w%%:*}"
            w=${w#*:}; w=${w%%:*}
            case $w in ''|-|[0-9]*) w="" ;; esac
            [ "$called" = "$w" ] || bad="$bad${bad:+; }want ${w:-no stand-in} first, got ${called:-none}" ;;
    esac
    case $want in help|refused|error) [ -z "$called" ] || bad="$bad${bad:+; }a stand-in ran: $called" ;; esac
    # the row's output folder back as it was, then the whole tree compared
    if [ -n "$outdir" ]; then
        if [ "$outdir" = "$SP" ]; then rm -rf "$SP" && mkdir "$SP"; else rm -rf "$outdir"; fi
    fi
    rm -rf "$tmp/out" && mkdir "$tmp/out"
    listing >"$log/after"
    if ! cmp -s "$log/before" "$log/after"; then
        bad="$bad${bad:+; }files changed outside its output"
        diff "$log/before" "$log/after" | sed -e "s|$tmp|T|g" -e 's/^/#     /' | head -20 >"$log/diff"
    fi
    case $want in
        ran:*) w=${want#ran:}; st=${w#*:}; st=${st%%:*}
               case $st in ''|-|[0-9]*) st="" ;; esac
               wshow="ran: exit ${w%%:*}${st:+ at $st}"
               case $want in *:V) wshow="$wshow, writes there" ;; esac ;;
        *) wshow=$want ;;
    esac
    if [ -z "$bad" ]; then
        printf 'ok %-3d %-30s %-62s %-26s %s\n' "$n" "${script#scripts/}" "$shown" "$wshow" "$got"
    else
        fails=$((fails + 1))
        printf 'not ok %-3d %-26s %-62s %-26s %s: %s\n' "$n" "${script#scripts/}" "$shown" "$wshow" "$got" "$bad"
        sed -e "s|$tmp|T|g" -e 's/^/#   stderr: /' "$log/err" | head -8
        [ -s "$log/diff" ] && cat "$log/diff"
        listing >"$log/before"     # the next row compares with the tree as it is now
    fi
    rm -f "$log/diff"
done <"$tmp/rows"

# Temporaries are named with their process's id; the next run of the same kind removes those of a
# process that is gone (999999999 is above any pid_max) and keeps a live one's (this shell's).
dead=999999999
stale() { # stale DESCRIPTION DEAD LIVE: DEAD is gone and LIVE is still there
    n=$((n + 1))
    if [ ! -e "$2" ] && [ -d "$3" ]; then echo "ok $n - $1"
    else echo "not ok $n - $1 (dead one there: $([ -e "$2" ] && echo yes || echo no), live one there: $([ -d "$3" ] && echo yes || echo no))"; fails=$((fails + 1)); fi
}
d=$tmp/dest
mkdir -p "$d/.speedlab-gpu-payload.$dead.aaaaaa" "$d/speedlab-gpu-check.$dead.bbbbbb" "$d/speedlab-gpu-check.$$.cccccc"
(cd "$tmp/cwd" && PATH="$tmp/standin:$PATH" SPEEDLAB_BUNDLE_DIR=$d sh "$tmp/speedlab-gpu.run" check --bogus >/dev/null 2>&1)
stale "speedlab-gpu.run removes a killed run's unpacked folders" "$d/speedlab-gpu-check.$dead.bbbbbb" "$d/speedlab-gpu-check.$$.cccccc"
echo "not a tarball" >"$tmp/not.tar.gz"
mkdir -p "$tmp/tmpdir/speedlab-results-page.$dead.aaaaaa" "$tmp/tmpdir/speedlab-results-page.$$.bbbbbb"
(cd "$tmp/cwd" && TMPDIR=$tmp/tmpdir SPEEDLAB=$speedlab sh "$r/scripts/results-page.sh" add-gpu "$tmp/not.tar.gz" page >/dev/null 2>&1)
stale "results-page.sh removes a killed run's temporary folder" "$tmp/tmpdir/speedlab-results-page.$dead.aaaaaa" "$tmp/tmpdir/speedlab-results-page.$$.bbbbbb"
n=$((n + 1))
name=speedlab-hostile-test-$$
if mkdir "/var/tmp/$name.$dead.aaaaaa" 2>/dev/null; then
    mkdir -p "/var/tmp/$name.$$.bbbbbb"
    new=$(. "$r/scripts/debian-root.sh" && dr_new "$name")
    n=$((n - 1))
    stale "fresh-check.sh and the bundle's selftest remove a killed run's root (dr_new)" "/var/tmp/$name.$dead.aaaaaa" "/var/tmp/$name.$$.bbbbbb"
    [ -n "$new" ] && [ -d "$new" ] || { echo "# dr_new made no folder"; fails=$((fails + 1)); }
    rm -rf "/var/tmp/$name".*
else
    echo "ok $n - fresh-check.sh's stale roots # SKIP /var/tmp is not writable here"
fi

n=$((n + 1))
if [ -z "$missing" ]; then echo "ok $n - every script has rows in the table"
else echo "not ok $n - scripts with no row in the table:$missing"; fails=$((fails + 1)); fi
echo "# $fails of $n rows failed"
[ $fails -eq 0 ]
