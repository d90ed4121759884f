#!/usr/bin/env bash
# Create the three test environments under .venv/ (idempotent).
#
#   .venv/pure   plain Python, no bpy:     numpy<2, pytest, hypothesis, mujoco
#   .venv/bpy45  Blender 4.5 LTS as module: bpy==4.5.15 + pytest, hypothesis
#   .venv/bpy50  Blender 5.0 as module:     bpy==5.0.1  + pytest, hypothesis, mujoco
#   and in both bpy environments the extension's bundled wheels (embreex), from wheels/ (see the end)
#
# MuJoCo is a test and benchmark dependency only (never shipped, never imported by the add-on): an
# independent reference for robot kinematics and the baseline of scripts/bench_sim_vs_blender.py.
#
# A venv is skipped when its marker file (.venv/<name>/.rscene-setup-ok) exists and records the
# same requirement list; otherwise it is deleted and rebuilt from scratch. Both bpy wheels pin
# numpy<2 (1.26), which pip resolves by itself.
#
# Environment:
#   PYTHON        interpreter to build the venvs from (default: python3.11 if present, else python3);
#                 must be CPython 3.11, the only version the bpy wheels exist for.
#   SETUP_ONLY    space-separated subset of "pure bpy45 bpy50" to set up (default: all three).
#   Any PIP_* variable (e.g. PIP_FIND_LINKS=/dir/with/wheels) is honoured by pip as usual.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV_ROOT="$ROOT/.venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

COMMON_REQS=(pytest hypothesis)
declare -A REQS=(
  [pure]="numpy<2 ${COMMON_REQS[*]} mujoco==4.0.0"
  [bpy45]="bpy==4.5.15 ${COMMON_REQS[*]}"
  [bpy50]="bpy==5.0.1 ${COMMON_REQS[*]} mujoco==4.0.0"
)
ORDER=(pure bpy45 bpy50)
if [[ -n "${SETUP_ONLY:-}" ]]; then
  read -r -a ORDER <<<"$SETUP_ONLY"
fi

pick_python() {
  if [[ -n "${PYTHON:-}" ]]; then echo "$PYTHON"; return; fi
  if command -v python3.11 >/dev/null 2>&1; then echo python3.11; return; fi
  echo python3
}
PY="$(pick_python)"
PY_VER="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [[ "$PY_VER" != "3.11" ]]; then
  echo "setup: $PY is Python $PY_VER; the bpy wheels need Python 3.11 (set PYTHON=...)" >&2
  exit 1
fi

log() { printf 'setup: %s\n' "$*"; }
t_all=$SECONDS
mkdir -p "$VENV_ROOT"

for name in "${ORDER[@]}"; do
  if [[ -z "${REQS[$name]+x}" ]]; then
    echo "setup: unknown environment '$name' (expected: pure bpy45 bpy50)" >&2
    exit 1
  fi
  venv="$VENV_ROOT/$name"
  marker="$venv/.rscene-setup-ok"
  want="python=$PY_VER reqs=${REQS[$name]}"
  if [[ -f "$marker" && "$(cat "$marker")" == "$want" && -x "$venv/bin/python" ]]; then
    log "$name: up to date, skipped"
    continue
  fi
  t0=$SECONDS
  if [[ -e "$venv" ]]; then
    log "$name: incomplete or outdated, recreating"
    rm -rf "$venv"
  fi
  log "$name: creating venv with $PY ($PY_VER)"
  "$PY" -m venv "$venv"
  read -r -a reqs <<<"${REQS[$name]}"
  log "$name: pip install ${reqs[*]}"
  "$venv/bin/python" -m pip install --quiet "${reqs[@]}"
  # Sanity check: the environment imports what it promises (bpy import is ~1 s).
  if [[ "$name" == bpy* ]]; then
    "$venv/bin/python" -c 'import bpy, numpy, pytest, hypothesis; print("setup:   bpy", bpy.app.version_string, "numpy", numpy.__version__)'
  else
    "$venv/bin/python" -c 'import numpy, pytest, hypothesis; print("setup:   numpy", numpy.__version__, "pytest", pytest.__version__)'
  fi
  printf '%s' "$want" >"$marker"
  log "$name: done in $((SECONDS - t0)) s"
done

# Wheels the extension ships (blender_manifest.toml `wheels`, e.g. embreex for the lidar): fetched into
# wheels/ (pinned, sha256-checked; skipped when already there) and installed into the bpy environments,
# as Blender installs them with the extension. FETCH_WHEELS_PLATFORMS (e.g. "linux-x64") limits the
# fetch; by default every platform's wheel is fetched so scripts/build_extension.py can build them all.
fetch_args=()
for platform in ${FETCH_WHEELS_PLATFORMS:-}; do fetch_args+=(--platform "$platform"); done
log "wheels: scripts/fetch_wheels.py ${fetch_args[*]}"
"$VENV_ROOT/${ORDER[0]}/bin/python" "$ROOT/scripts/fetch_wheels.py" "${fetch_args[@]}" >/dev/null
for name in "${ORDER[@]}"; do
  if [[ "$name" == bpy* ]]; then
    # only this machine's wheel matches; pip leaves an installed equal version alone
    "$VENV_ROOT/$name/bin/python" -m pip install --quiet --no-deps --no-index --find-links "$ROOT/wheels" embreex
    "$VENV_ROOT/$name/bin/python" -c 'import bpy, embreex.rtcore_scene; print("setup:   '"$name"' embreex", embreex.__version__)'
  fi
done

log "all environments ready in $((SECONDS - t_all)) s"
