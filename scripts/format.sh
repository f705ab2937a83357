#!/usr/bin/env bash
# Formats every C++ and JavaScript source with the repository's own settings:
#   C++         clang-format with .clang-format (Google style, 100 columns)
#   JavaScript  Prettier with .prettierrc.json (100 columns) over web/, bench/ and scripts/*.mjs
#
#   ./scripts/format.sh          rewrites files in place
#   ./scripts/format.sh --check  changes nothing; fails listing the files that differ, and the
#                                lines of JavaScript in web/ over 100 columns, which Prettier
#                                leaves alone in strings and comments (scripts/line-length.mjs)
#                                (the `format` stage of ./scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

mode=${1:-}
ensure_packages clang-format
ensure_node
[ -x web/node_modules/.bin/prettier ] || (cd web && npm ci --no-audit --no-fund)

mapfile -t cpp < <(git ls-files '*.cpp' '*.h')
prettier=(web/node_modules/.bin/prettier --log-level warn)
js=(web bench 'scripts/*.mjs')

if [ "$mode" = --check ]; then
  failed=0
  unformatted=$(for f in "${cpp[@]}"; do
    clang-format --dry-run "$f" 2>&1 | grep -q . && echo "$f"
  done || true)
  if [ -n "$unformatted" ]; then
    printf 'not clang-formatted (run ./scripts/format.sh):\n%s\n' "$unformatted" >&2
    failed=1
  fi
  if ! "${prettier[@]}" --check "${js[@]}"; then
    echo 'not Prettier-formatted (run ./scripts/format.sh): the files above' >&2
    failed=1
  fi
  if ! node scripts/line-length.mjs; then
    echo 'break the lines above by hand: Prettier keeps strings and comments as written' >&2
    failed=1
  fi
  [ "$failed" = 0 ] || exit 1
  echo "every C++ and JavaScript source is formatted, and no line of JavaScript in web/ is over 100 columns"
else
  clang-format -i "${cpp[@]}"
  "${prettier[@]}" --write "${js[@]}"
fi
