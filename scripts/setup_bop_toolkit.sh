#!/usr/bin/env bash
# Build .venv/bop: the BOP toolkit (thodan/bop_toolkit) as a test-only reference for
# tests/blender/test_bop_toolkit.py, which runs the toolkit's own calc_gt_info.py and eval_calc_errors.py
# on our BOP output. Never shipped, never imported by the add-on; its code is not vendored here.
#
# The toolkit is not on PyPI, so it needs a clone (any of, first found):
#   $BOP_TOOLKIT                      a checkout of github.com/thodan/bop_toolkit
#   ../bop_toolkit                    beside this repository
#   ../.mirror/thodan+bop_toolkit/repo  a bare mirror (its HEAD is exported)
# Without one this prints why and exits 0 (the test then skips, saying so).
#
# Python 3.11 (the toolkit wants numpy<2 and Python<3.13); its renderer is vispy on EGL, which runs
# headless on Mesa's software rasteriser (EGL_PLATFORM=surfaceless).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv/bop"
REQS=("numpy<2" "scipy>=1.10" "imageio>=2.35" "pypng>=0.20220715.0" "pyopengl>=3.1" "vispy>=0.14.2" "pillow>=8.2")

source_dir=""
if [[ -n "${BOP_TOOLKIT:-}" && -d "${BOP_TOOLKIT}/bop_toolkit_lib" ]]; then
  source_dir="$BOP_TOOLKIT"
elif [[ -d "$ROOT/../bop_toolkit/bop_toolkit_lib" ]]; then
  source_dir="$(cd "$ROOT/../bop_toolkit" && pwd)"
elif [[ -d "$ROOT/../.mirror/thodan+bop_toolkit/repo" ]]; then
  mirror="$ROOT/../.mirror/thodan+bop_toolkit/repo"
  source_dir="$ROOT/.venv/bop-toolkit-src"
  rm -rf "$source_dir" && mkdir -p "$source_dir"
  git --git-dir="$mirror" archive HEAD | tar -x -C "$source_dir"
fi
if [[ -z "$source_dir" ]]; then
  echo "setup_bop_toolkit: no clone of thodan/bop_toolkit found (set BOP_TOOLKIT=/path/to/clone); skipped"
  exit 0
fi

marker="$VENV/BOP_TOOLKIT"
if [[ -f "$marker" && "$(cat "$marker")" == "$source_dir" && -x "$VENV/bin/python" ]]; then
  echo "setup_bop_toolkit: .venv/bop is up to date ($source_dir)"
  exit 0
fi
PY="${PYTHON311:-$ROOT/.venv/pure/bin/python}"
[[ -x "$PY" ]] || PY="$(command -v python3.11)"
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q "${REQS[@]}"
"$VENV/bin/python" -m pip install -q --no-deps "$source_dir"  # the library; its scripts run from the clone
echo "$source_dir" >"$marker"
echo "setup_bop_toolkit: .venv/bop ready (toolkit from $source_dir)"
