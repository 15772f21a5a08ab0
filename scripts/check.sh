#!/usr/bin/env bash
# Static checks, run by .ci/run before the tests: ruff lint, ruff format, mypy (config:
# ruff.toml, mypy.ini). Runs all three, then exits non-zero if any failed.
# Fix: `ruff format .` for formatting, `ruff check --fix .` for the lint autofixes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh

failed=()
run() {
  echo "check.sh: $*"
  "$@" || failed+=("$*")
}
run python -m ruff check --output-format concise .
run python -m ruff format --check .
run python -m mypy gravity_friction_comp
if [ ${#failed[@]} -gt 0 ]; then
  printf 'check.sh: FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "check.sh: all checks passed"
