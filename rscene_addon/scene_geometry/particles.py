"""A ``granular`` record's particles: given per particle, or a box filled at load time.

The box fill keeps every particle inside the box (centres inset by the radius), spaces them at least
one diameter apart (no overlap at rest) and jitters the lattice by a fixed-seed random offset, so a
settling pile does not keep the grid's symmetry and every run (and Blender's view) is the same. The
default record (box 1 x 1 x 0.3 m, radius 0.01, spacing 0.025) gives 40 x 40 x 12 = 19200 particles.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.checks import MAX_BOX_FILL
from ..model.fields import Fields

JITTER_SEED = 20240601
# maxParticles <= 0 means "no limit" in the record; memory still needs one (the reader refuses more).
HARD_PARTICLE_LIMIT = MAX_BOX_FILL


@dataclass
class ParticleLayout:
    """Particles in the record's own frame (before its scale, rotation and position)."""

    positions: np.ndarray  # (N, 3)
    radii: np.ndarray  # (N,)
    warnings: list[str] = field(default_factory=list)


def box_fill(box_min, box_max, radius: float, spacing: float, max_particles: int,
             seed: int | None = None) -> tuple[np.ndarray, int]:
    """Particle centres filling ``box_min``..``box_max`` (x fastest, then y, then z), at most ``max_particles``,
    and how many the box holds. Only the kept particles are generated: a huge box costs no memory.
    ``seed`` seeds the jitter (None: :data:`JITTER_SEED`; a dataset variation passes its own).
    """
    lo, hi = np.asarray(box_min, dtype=float), np.asarray(box_max, dtype=float)
    spacing = max(spacing, 2.0 * radius)
    # per axis what np.arange(lo + r, hi - r + 1e-9, spacing) would hold, counted (not made): a tiny
    # spacing in a big box would ask for more points than memory holds on one axis alone
    starts = [lo[i] + radius for i in range(3)]
    sizes = [max(0.0, float(np.ceil((hi[i] - radius + 1e-9 - starts[i]) / spacing))) for i in range(3)]
    if 0.0 in sizes:  # box thinner than a particle: one layer in its middle
        starts = [starts[i] if sizes[i] else (lo[i] + hi[i]) / 2 for i in range(3)]
        sizes = [size or 1.0 for size in sizes]
    total = sizes[0] * sizes[1] * sizes[2]
    counts = [int(min(size, max_particles + 1)) for size in sizes]
    n = int(min(total, max_particles))
    index = np.arange(n)
    ix, iy, iz = index % counts[0], (index // counts[0]) % counts[1], index // (counts[0] * counts[1])
    local = np.stack((starts[0] + ix * spacing, starts[1] + iy * spacing, starts[2] + iz * spacing), axis=1)
    total = int(total) if total < 2**63 else total
    jitter = np.random.default_rng(JITTER_SEED if seed is None else int(seed)).uniform(-0.05, 0.05, local.shape)
    return local + jitter * (spacing - 2 * radius + 0.2 * radius), total


def granular_particles(record, seed: int | None = None) -> ParticleLayout:
    """The particles a ``granular`` record stands for; ``positions`` given in the record win over the box.
    ``seed`` seeds the box fill's jitter (None: the fixed default that Blender's view also uses)."""
    f = Fields(record)
    path = f.text("path", "granular")
    radius = f.num("radius", 0.01)
    warnings: list[str] = []
    max_particles = f.int("maxParticles", 20000)
    if max_particles <= 0 or max_particles > HARD_PARTICLE_LIMIT:
        max_particles = HARD_PARTICLE_LIMIT
    local = f.numbers("positions")
    if len(local) >= 3 and len(local) % 3 == 0:
        local = local.reshape(-1, 3)
        total = len(local)
        local = local[:max_particles]
    elif radius > 0:
        local, total = box_fill(f.vec3("boxMin", (-0.5, -0.5, 0.0)), f.vec3("boxMax", (0.5, 0.5, 0.3)), radius,
                                f.num("spacing", 2.5 * radius), max_particles, seed)
    else:
        local, total = np.zeros((0, 3)), 0
    if total > len(local):
        warnings.append(f"{path}: {total:.6g} particles capped at maxParticles={max_particles}")
    radii = f.numbers("radii")
    if len(radii) != len(local):
        radii = np.full(len(local), radius)
    return ParticleLayout(local, radii.astype(float), warnings)
