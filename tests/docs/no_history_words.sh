#!/bin/sh
# tests/docs/no_history_words.sh ROOT: the product says what is true now, not how it was written.
#
# A reader cannot look up "issue 16" or "the fifth session", and a link to a file outside the repository
# leads nowhere in a clone; history lives in git. So this fails when such words come back:
#   1. the words below, case-insensitively, in README.md and the source, docs, script and test
#      folders (binary files, records and fuzz corpora are data and left out, and so is this file,
#      which has to name the words);
#   2. a relative Markdown link in README.md or docs/ that leaves the repository or names nothing.
# Each hit is printed as FILE:LINE: TEXT. Paths listed in tests/docs/history_words_pending.txt (one
# prefix per line) are skipped in 1 while they are being rewritten.
# Exit 0 none found, 1 found (or ROOT unreadable).
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 1
root=$(pwd -P)
self=tests/docs/no_history_words.sh
pending=tests/docs/history_words_pending.txt

# issue numbers, narration of who measured what when, files outside the repository, a remote tool's
# call syntax, dated runs in prose ("on 2026-11-23 (21:04 UTC)"; ISO timestamps in data are kept)
words='\bissues? [0-9]|superseded|withdrawn|helper branch|CASE_STUDIES|NOTES\.md|\.\./shared'
words="$words"'|(first|second|third|fourth|fifth|sixth|seventh) session|this session|current session|carry='
words="$words"'|\bk00[0-9]\b|development VM|\bdev VM\b|measured while'
words="$words"'|20[0-9][0-9]-[01][0-9]-[0-3][0-9]([^T0-9]|$)|[0-9][0-9]:[0-9][0-9] UTC'

dirs=
for d in README.md docs experiments kernels profiler reports plots baselines scripts tests; do
    [ -e "$d" ] && dirs="$dirs $d"
done

hits=$(mktemp) || exit 1
trap 'rm -f "$hits"' EXIT

# shellcheck disable=SC2086 # $dirs is a list of words without spaces
grep -rnIiE --exclude='*.jsonl' --exclude='*.json' --exclude='*.csv' --exclude='*.tsv' \
    -- "$words" $dirs 2>/dev/null |
    awk -v self="$self" -v pending="$pending" '
        BEGIN {
            while ((getline line < pending) > 0) {
                sub(/[ \t\r]+$/, "", line)
                if (line != "" && line !~ /^#/) skip[++n] = line
            }
        }
        {
            file = $0; sub(/:.*/, "", file)
            if (file == self || index(file, "tests/fuzz/corpus/") == 1) next
            for (i = 1; i <= n; i++) if (index(file, skip[i]) == 1) next
            rest = substr($0, length(file) + 2)
            lineno = rest; sub(/:.*/, "", lineno)
            text = substr(rest, length(lineno) + 2)
            print file ":" lineno ": " text
        }' >>"$hits"

# Relative links: every [text](target) in README.md and docs/**/*.md whose target is not a URL or an
# anchor must name a file or folder inside the repository.
for md in README.md $(find docs -name '*.md' 2>/dev/null | sort); do
    [ -f "$md" ] || continue
    dir=$(dirname "$md")
    grep -no '\]([^)]*)' "$md" | while IFS= read -r m; do
        lineno=${m%%:*}
        target=${m#*:](}
        target=${target%)}
        target=${target%% *}          # a title after the path
        target=${target#<}
        target=${target%>}
        case $target in
            '' | '#'* | http://* | https://* | mailto:*) continue ;;
        esac
        path=${target%%#*}
        [ -n "$path" ] || continue
        case $path in
            /*) abs=$(realpath -m "$path") ;;
            *) abs=$(realpath -m "$dir/$path") ;;
        esac
        case $abs in
            "$root" | "$root"/*) ;;
            *) echo "$md:$lineno: link ($target) points outside the repository"; continue ;;
        esac
        [ -e "$abs" ] || echo "$md:$lineno: link ($target) names nothing in the repository"
    done
done >>"$hits"

if [ -s "$hits" ]; then
    cat "$hits"
    echo "no_history_words: $(wc -l <"$hits") hit(s): say what is true now; history lives in git" >&2
    exit 1
fi
exit 0
