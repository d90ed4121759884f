"""Render a scene's sensors (cameras, lidars, IMUs) over frames, from the command line.

    blender --background --python-exit-code 1 --python scripts/render_rscene.py -- \\
        SCENE --frames 1-48 --out DIR [--samples N] [--sensors A,B ...] [--chunk K/N]

SCENE is a .blend (opened as is) or a scene file (.rscene, ...) imported into an empty file. With
``--chunk K/N`` only the K-th of N equal frame chunks is rendered (run N of these in parallel; each
writes manifest_chunkK-of-N.json). Also runs as ``python scripts/render_rscene.py SCENE ...`` where
Blender is installed as the ``bpy`` module. ``--help`` lists every option.
"""
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

from rscene_addon.commands.render_job import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
