"""Datasets at scale: ``python -m rscene_addon dataset JOB.toml --out DIR [--workers N] [--ray [ADDRESS]]``.

Many scenes x variations x frames x sensors, cut into work units (scene, variation, frame chunk) that
run in Blender-capable processes: a local pool by default, Ray tasks on a cluster with ``--ray``.
Modules, one job each:

* :mod:`.job` (pure) JOB.toml read and checked in full before any work
* :mod:`.units` (pure) bakes and units, their fingerprints and worker tasks
* :mod:`.store` (pure) the dataset folder: scratch folders renamed into place, complete units
* :mod:`.progress` (pure) the progress line
* :mod:`.index` (pure) the dataset's index: ``dataset.json`` and ``units.jsonl``
* :mod:`.reader` (pure) ``load(DIR)``: a dataset's frames, calibration and arrays, streamed
* :mod:`.execute` (bpy, in workers) one bake or one unit, Blender's output sent to a log
* :mod:`.worker` the local pool's worker process; :mod:`.local_pool` the pool
* :mod:`.ray_runner` Ray tasks (``ray`` is imported there only, when ``--ray`` is given)
* :mod:`.run` the driver and its command line

Nothing here is imported by the Blender extension.
"""
from .reader import Dataset, DatasetError, Frame, load

__all__ = ["Dataset", "DatasetError", "Frame", "load"]
