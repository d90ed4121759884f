"""Command-line jobs, in one place: what ``python -m rscene_addon`` (``rscene_addon/cli.py``) and the
``scripts/`` entry points run. Each job wires the layers below (formats, sim, blender, render) together;
none of those layers imports this package.

* :mod:`.simulate_job` ``simulate`` (pure: no bpy)
* :mod:`.blender_jobs` ``import``, ``export``, ``bake``, ``demo`` (bpy imported when they run)
* :mod:`.render_job` ``render`` arguments and run (bpy imported when it runs)
"""
