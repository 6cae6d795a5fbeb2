#!/usr/bin/env bash
# `make lint`: the Swift against .swift-format (swift-format, from the toolchain) and the C
# against .clang-format (clang-format). `make format` (scripts/lint.sh --fix) rewrites both.
# Fails naming each file and line that differs; run `make format` and review the change.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=${1:-}
swift_paths=(Package.swift Sources Tests Fuzz Benchmarks/Package.swift Benchmarks/Sources Benchmarks/sdk-startup/Sources)
# Fixtures are inputs as found (hostile, odd or generated): never reformatted.
mapfile -t c_files < <(git ls-files '*.c' '*.h' | grep -v '^Tests/Fixtures/')

command -v swift-format >/dev/null || { echo "lint: swift-format is not on PATH (it ships with the Swift toolchain)" >&2; exit 1; }
command -v clang-format >/dev/null || { echo "lint: clang-format is missing: apt-get install clang-format" >&2; exit 1; }

if [ "$fix" = --fix ]; then
    swift-format format --in-place --recursive --parallel "${swift_paths[@]}"
    clang-format -i "${c_files[@]}"
    exit 0
fi
status=0
swift-format lint --strict --recursive --parallel "${swift_paths[@]}" || status=1
clang-format --dry-run --Werror "${c_files[@]}" || status=1
if [ $status -ne 0 ]; then echo "lint: differences above; \`make format\` applies the style" >&2; fi
exit $status
