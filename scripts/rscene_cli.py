"""Run the rscene_addon command line inside Blender:

    blender --background --python-exit-code 1 --python scripts/rscene_cli.py -- validate scene.rscene

Everything after ``--`` is what ``python -m rscene_addon`` takes. The exit status reaches the shell.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rscene_addon.cli import main  # noqa: E402

status = main()
if status:
    raise SystemExit(status)
