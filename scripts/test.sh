#!/usr/bin/env bash
# Run the test suite in the four environments made by scripts/setup.sh:
#
#   .venv/pure   pytest tests/unit   (plain Python 3.11, numpy 1.26, no bpy) + ruff
#   .venv/pure2  pytest tests/unit   (plain Python 3.13, numpy 2.x, no bpy)
#   .venv/bpy45  pytest tests        (Blender 4.5 LTS as a module: Python 3.11, numpy 1.26)
#   .venv/bpy52  pytest tests        (Blender 5.2 LTS as a module: Python 3.13, numpy 2.x)
#
# Extra arguments go to every pytest run, e.g.  bash scripts/test.sh -x -k manifest
# TEST_ENVS="pure bpy52" limits the run to some environments.
# Exits non-zero if any run fails (any non-zero pytest status, including 5 = no tests collected).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PYTHONDONTWRITEBYTECODE=1

# Blender writes add-on/extension state under its user resource dir: keep it out of ~/.config/blender.
CREATED_USER_RES=""
if [[ -z "${BLENDER_USER_RESOURCES:-}" ]]; then
  BLENDER_USER_RESOURCES="$(mktemp -d -t rscene-blender-user.XXXXXX)"
  CREATED_USER_RES="$BLENDER_USER_RESOURCES"
fi
export BLENDER_USER_RESOURCES
cleanup() { [[ -n "$CREATED_USER_RES" ]] && rm -rf "$CREATED_USER_RES"; }
trap cleanup EXIT

declare -A TARGETS=([pure]="tests/unit" [pure2]="tests/unit" [bpy45]="tests" [bpy52]="tests")
read -r -a ENVS <<<"${TEST_ENVS:-pure pure2 bpy45 bpy52}"

declare -A RESULT
overall=0
for name in "${ENVS[@]}"; do
  if [[ -z "${TARGETS[$name]+x}" ]]; then
    echo "test.sh: unknown environment '$name' (expected: pure pure2 bpy45 bpy52)" >&2
    RESULT[$name]="FAIL (unknown environment)"; overall=1; continue
  fi
  py="$ROOT/.venv/$name/bin/python"
  if [[ ! -x "$py" || ! -f "$ROOT/.venv/$name/.rscene-setup-ok" ]]; then
    echo "test.sh: .venv/$name is missing or incomplete; run: bash scripts/setup.sh" >&2
    RESULT[$name]="FAIL (environment missing, run scripts/setup.sh)"; overall=1; continue
  fi
  echo "=== [$name] pytest -q ${TARGETS[$name]} $* ==="
  t0=$SECONDS
  "$py" -m pytest -q "${TARGETS[$name]}" "$@"
  rc=$?
  if [[ $rc -eq 0 && -x "$ROOT/.venv/$name/bin/ruff" ]]; then
    echo "=== [$name] ruff check ==="
    "$ROOT/.venv/$name/bin/ruff" check rscene_addon tests scripts || rc=1
  fi
  dt=$((SECONDS - t0))
  if [[ $rc -eq 0 ]]; then
    RESULT[$name]="ok (${dt} s)"
  else
    RESULT[$name]="FAIL (pytest exit $rc, ${dt} s)"; overall=1
  fi
done

echo
echo "=== summary ==="
for name in "${ENVS[@]}"; do
  printf '%-6s %s\n' "$name" "${RESULT[$name]}"
done
exit $overall
