#!/usr/bin/env bash
# Man pages of appex (appex.1, one page covering every subcommand) and appexd (appexd.8) from
# their argument-parser definitions, into OUT_DIR. It runs generate-manual, the tool behind
# argument-parser's GenerateManual plugin (`swift package plugin generate-manual`), directly on
# the release executables: the plugin would first build every product of the package again.
#
#   scripts/make-man.sh OUT_DIR
set -euo pipefail
out=${1:?usage: make-man.sh OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
swift build -c release --product generate-manual >/dev/null
bin=$(swift build -c release --show-bin-path)
date=$(git log -1 --format=%cs 2>/dev/null || date +%F)
rm -rf "$out"
mkdir -p "$out"
"$bin/generate-manual" "$bin/appex-commands" --date "$date" --section 1 --output-directory "$out"
"$bin/generate-manual" "$bin/appexd" --date "$date" --section 8 --output-directory "$out"
ls "$out"
