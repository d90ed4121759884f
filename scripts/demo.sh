#!/usr/bin/env bash
# The main job: import + simulate + bake + render the bundled demo scene into out/demo/, with the best
# environment from scripts/setup.sh. Extra arguments go to `python -m rscene_addon` instead
# (default: demo --out out/demo).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PY=python3
for name in bpy52 bpy45 pure; do
  if [[ -x "$ROOT/.venv/$name/bin/python" ]]; then PY="$ROOT/.venv/$name/bin/python"; break; fi
done
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
if [[ -z "${BLENDER_USER_RESOURCES:-}" ]]; then
  BLENDER_USER_RESOURCES="$(mktemp -d -t rscene-blender-user.XXXXXX)"
  export BLENDER_USER_RESOURCES
  trap 'rm -rf "$BLENDER_USER_RESOURCES"' EXIT
fi

if [[ $# -eq 0 ]]; then set -- demo --out out/demo; fi
echo "demo: $PY -m rscene_addon $*"
"$PY" -m rscene_addon "$@"
