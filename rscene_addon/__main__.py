"""``python -m rscene_addon``: the command line (see cli.py)."""
import os
import sys

from .cli import main

status = main()
if "bpy" in sys.modules and not sys.argv[0].endswith("blender"):
    # The bpy 4.5 module can hang in its interpreter-exit teardown after some imports (seen with
    # scenes whose files are missing); everything is written and flushed by now, so leave directly.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
sys.exit(status)
