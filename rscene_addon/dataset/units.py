"""Work units: (scene, variation, frame chunk), and the bakes they render from (pure).

A job's frames are cut into ``N = ceil(frames / chunk)`` near-equal contiguous chunks with the render
command's own ``--chunk K/N`` rule (``products.chunks.chunk``), so a unit is exactly what
``python -m rscene_addon render BAKE --frames ... --chunk K/N`` renders. Every unit and bake carries a
fingerprint of everything its files depend on (scene bytes, seed, settings): a finished unit is reused
only while its fingerprint still matches the job.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

from ..products.chunks import chunk as take_chunk
from ..products.chunks import manifest_filename
from .job import Job, JobScene, Variation

__all__ = ["Bake", "Unit", "bake_frames", "plan_units"]


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def file_digest(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def bake_frames(frames) -> tuple[int, int]:
    """Frames to simulate for ``frames``: their span plus the two after the last (a lidar sweep reads the
    next frame's pose, an IMU frame the two after)."""
    return min(frames), max(frames) + 2


@dataclass(frozen=True)
class Bake:
    """One scene simulated and baked for one variation."""

    scene: JobScene
    variation: Variation
    frame_start: int
    frame_end: int
    fps: float | None
    substeps: int | None
    fingerprint: str

    @property
    def key(self) -> str:
        return f"{self.scene.name}/{self.variation.name}"

    def task(self) -> dict:
        return {"scene_path": self.scene.path, "frame_start": self.frame_start, "frame_end": self.frame_end,
                "fps": self.fps, "substeps": self.substeps, "seed": self.variation.seed,
                "fingerprint": self.fingerprint}


@dataclass(frozen=True)
class Unit:
    bake: Bake
    k: int
    n: int
    frames: tuple
    fingerprint: str

    @property
    def folder(self) -> str:
        """Where the unit's files live, relative to the dataset folder."""
        return f"{self.bake.key}/chunk{self.k:04d}-of-{self.n:04d}"

    @property
    def id(self) -> str:
        return self.folder

    @property
    def chunk(self) -> str:
        return f"{self.k}/{self.n}"

    @property
    def manifest_name(self) -> str:
        """The render command's manifest of this unit's ``--chunk K/N`` (in its folder)."""
        return manifest_filename((self.k, self.n))


def plan_units(job: Job, scene_digests: dict | None = None) -> tuple[list[Bake], list[Unit]]:
    """Every bake and unit of ``job``, in order (scene, variation, chunk). ``scene_digests`` maps a scene
    path to its content digest (default: read the file)."""
    digests = dict(scene_digests or {})
    n = max(1, math.ceil(len(job.frames) / job.chunk))
    start, end = bake_frames(job.frames)
    settings = job.settings()
    bakes, units = [], []
    for scene in job.scenes:
        digest = digests.get(scene.path) or file_digest(scene.path)
        for variation in scene.variations:
            bake = Bake(scene, variation, start, end, job.fps, job.substeps,
                        _digest(["bake", digest, variation.seed, start, end, job.fps, job.substeps]))
            bakes.append(bake)
            for k in range(1, n + 1):
                frames = tuple(take_chunk(job.frames, k, n))
                units.append(Unit(bake, k, n, frames, _digest(["unit", bake.fingerprint, k, n, settings])))
    return bakes, units


_OPTION_NAMES = {"rgb_bits": "rgb_bit_depth", "denoise": "denoise", "cryptomatte": "cryptomatte",
                 "range": "range_image", "raycaster": "raycaster"}


def unit_task(job: Job, unit: Unit) -> dict:
    """What a worker needs to render ``unit`` (JSON values: it crosses process and machine borders)."""
    options = {_OPTION_NAMES[k]: v for k, v in job.render.items()}
    if job.products:
        options["products"] = list(job.products)
    return {"unit": unit.id, "fingerprint": unit.fingerprint, "bake": unit.bake.task(),
            "bake_key": unit.bake.key, "scene_path": unit.bake.scene.path, "seed": unit.bake.variation.seed,
            "frames_spec": job.frames_spec, "frames": list(unit.frames), "chunk": unit.chunk,
            "manifest": unit.manifest_name, "samples": job.samples,
            "device": job.device, "sensors": list(job.sensors), "options": options}
