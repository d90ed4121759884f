#!/usr/bin/env bash
# Demo entry point (placeholder; to be extended). Runs the package's command-line interface with the
# best available environment from scripts/setup.sh. Extra arguments go to `python -m rscene_addon`
# (default: --help).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PY=python3
for name in bpy50 bpy45 pure; do
  if [[ -x "$ROOT/.venv/$name/bin/python" ]]; then PY="$ROOT/.venv/$name/bin/python"; break; fi
done
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
if [[ -z "${BLENDER_USER_RESOURCES:-}" ]]; then
  BLENDER_USER_RESOURCES="$(mktemp -d -t rscene-blender-user.XXXXXX)"
  export BLENDER_USER_RESOURCES
  trap 'rm -rf "$BLENDER_USER_RESOURCES"' EXIT
fi

if [[ ! -f rscene_addon/__main__.py ]]; then
  echo "demo: rscene_addon has no command-line interface yet (rscene_addon/__main__.py); nothing to demo."
  exit 0
fi
if [[ $# -eq 0 ]]; then set -- --help; fi
echo "demo: $PY -m rscene_addon $*"
"$PY" -m rscene_addon "$@"
