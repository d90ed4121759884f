#!/usr/bin/env bash
# Create the test environments under .venv/ (idempotent).
#
#   .venv/pure    Python 3.11, numpy 1.26:  numpy<2, numba, pytest, hypothesis, mujoco
#   .venv/pure2   Python 3.13, numpy 2.x:   numpy>=2, numba, pytest, hypothesis
#   .venv/bpy45   Blender 4.5 LTS as module (Python 3.11, numpy 1.26): bpy==4.5.15 + test deps
#   .venv/bpy52   Blender 5.2 LTS as module (Python 3.13, numpy 2.x):  bpy==5.2.3 + test deps, mujoco, ray
#   and in both bpy environments the extension's bundled wheels (embreex, numba, llvmlite) from wheels/,
#   installed as Blender installs them with the extension (see the end).
#
# MuJoCo, pycocotools and OpenCV (opencv-python-headless 4.11, numpy 1.x and 2.x: reads our depth EXR)
# are test and benchmark references only (never shipped, never imported by the add-on).
# Ray is the optional cluster engine of the `dataset` command (CLI environment only, never shipped).
#
# A venv is skipped when its marker file (.venv/<name>/.rscene-setup-ok) exists and records the
# same interpreter and requirement list; otherwise it is deleted and rebuilt from scratch.
#
# Environment:
#   PYTHON311     Python 3.11 interpreter (default: python3.11 on PATH, else pyenv's 3.11.x)
#   PYTHON313     Python 3.13 interpreter (default: python3.13 on PATH, else pyenv's 3.13.x)
#   SETUP_ONLY    space-separated subset of "pure pure2 bpy45 bpy52" to set up (default: all four).
#   Any PIP_* variable (e.g. PIP_FIND_LINKS=/dir/with/wheels) is honoured by pip as usual.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV_ROOT="$ROOT/.venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

COMMON_REQS=(pytest hypothesis)
NUMBA_REQS=(numba==0.68.1 llvmlite==0.50.0)
declare -A REQS=(
  [pure]="numpy<2 ${NUMBA_REQS[*]} ${COMMON_REQS[*]} pycocotools mujoco==4.0.0 ruff==0.14.6"
  [pure2]="numpy>=2.2,<3 ${NUMBA_REQS[*]} ${COMMON_REQS[*]} pycocotools"
  [bpy45]="bpy==4.5.15 ${COMMON_REQS[*]} pycocotools opencv-python-headless==4.11.0.86"
  [bpy52]="bpy==5.2.3 ${COMMON_REQS[*]} pycocotools opencv-python-headless==4.11.0.86 mujoco==4.0.0 ray==2.60.0"
)
declare -A PYVER=([pure]=3.11 [pure2]=3.13 [bpy45]=3.11 [bpy52]=3.13)
ORDER=(pure pure2 bpy45 bpy52)
if [[ -n "${SETUP_ONLY:-}" ]]; then
  read -r -a ORDER <<<"$SETUP_ONLY"
fi

# find_python 3.13 -> an interpreter of that version: $PYTHON313, PATH, then pyenv
find_python() {
  local ver="$1" var="PYTHON${1/./}" cand
  local -a cands=()
  [[ -n "${!var:-}" ]] && cands+=("${!var}")
  cands+=("python$ver")
  if command -v pyenv >/dev/null 2>&1; then
    for v in $(pyenv versions --bare 2>/dev/null | grep -E "^$ver(\.[0-9]+)?$" | sort -rV); do
      cands+=("$(pyenv root)/versions/$v/bin/python$ver")
    done
  fi
  for cand in "${cands[@]}"; do
    if command -v "$cand" >/dev/null 2>&1 &&
       [[ "$("$cand" -c 'import sys, ssl, ctypes; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" == "$ver" ]]; then
      command -v "$cand"; return 0
    fi
  done
  return 1
}

log() { printf 'setup: %s\n' "$*"; }
t_all=$SECONDS
mkdir -p "$VENV_ROOT"

for name in "${ORDER[@]}"; do
  if [[ -z "${REQS[$name]+x}" ]]; then
    echo "setup: unknown environment '$name' (expected: pure pure2 bpy45 bpy52)" >&2
    exit 1
  fi
  ver="${PYVER[$name]}"
  if ! PY="$(find_python "$ver")"; then
    echo "setup: no Python $ver found for .venv/$name (with ssl and ctypes). Set PYTHON${ver/./}=/path/to/python$ver," >&2
    echo "       or install one: 'uv python install $ver', 'pyenv install $ver', or your OS package (python$ver-venv)." >&2
    exit 1
  fi
  venv="$VENV_ROOT/$name"
  marker="$venv/.rscene-setup-ok"
  want="python=$ver reqs=${REQS[$name]}"
  if [[ -f "$marker" && "$(cat "$marker")" == "$want" && -x "$venv/bin/python" ]]; then
    log "$name: up to date, skipped"
    continue
  fi
  t0=$SECONDS
  if [[ -e "$venv" ]]; then
    log "$name: incomplete or outdated, recreating"
    rm -rf "$venv"
  fi
  log "$name: creating venv with $PY ($ver)"
  "$PY" -m venv "$venv"
  read -r -a reqs <<<"${REQS[$name]}"
  log "$name: pip install ${reqs[*]}"
  "$venv/bin/python" -m pip install --quiet "${reqs[@]}"
  # Sanity check: the environment imports what it promises (bpy import is ~1 s).
  if [[ "$name" == bpy* ]]; then
    "$venv/bin/python" -c 'import bpy, numpy, pytest, hypothesis; print("setup:   bpy", bpy.app.version_string, "numpy", numpy.__version__)'
  else
    "$venv/bin/python" -c 'import numpy, numba, pytest, hypothesis; print("setup:   numpy", numpy.__version__, "numba", numba.__version__)'
  fi
  printf '%s' "$want" >"$marker"
  log "$name: done in $((SECONDS - t0)) s"
done

# Wheels the extension ships (blender_manifest.toml `wheels`: embreex for the lidar, numba + llvmlite for
# the simulation kernels): fetched into wheels/ (pinned, sha256-checked; skipped when already there) and
# installed into the bpy environments, as Blender installs them with the extension. FETCH_WHEELS_PLATFORMS
# (e.g. "linux-x64") limits the fetch; by default every platform's wheels are fetched so that
# scripts/build_extension.py can build every zip.
fetch_args=()
for platform in ${FETCH_WHEELS_PLATFORMS:-}; do fetch_args+=(--platform "$platform"); done
log "wheels: scripts/fetch_wheels.py ${fetch_args[*]}"
"$VENV_ROOT/${ORDER[0]}/bin/python" "$ROOT/scripts/fetch_wheels.py" "${fetch_args[@]}" >/dev/null
for name in "${ORDER[@]}"; do
  # the pure-Python wheels (COLLADA reading) belong to the pure layer: every environment has them
  "$VENV_ROOT/$name/bin/python" -m pip install --quiet --no-deps --no-index --find-links "$ROOT/wheels" \
    pycollada python-dateutil six
  if [[ "$name" == bpy* ]]; then
    # only this machine's wheels for this Python match; pip leaves an installed equal version alone
    "$VENV_ROOT/$name/bin/python" -m pip install --quiet --no-deps --no-index --find-links "$ROOT/wheels" \
      embreex numba llvmlite
    "$VENV_ROOT/$name/bin/python" -c 'import bpy, embreex.rtcore_scene, numba; print("setup:   '"$name"' embreex", embreex.__version__, "numba", numba.__version__)'
  fi
done

# The BOP toolkit (a test-only reference, not on PyPI): built into .venv/bop when a clone is found;
# otherwise its test skips saying so. A failure here is reported, never fatal to the main setup.
bash "$ROOT/scripts/setup_bop_toolkit.sh" || log "bop toolkit: setup failed (tests/blender/test_bop_toolkit.py will skip)"

log "all environments ready in $((SECONDS - t_all)) s"
