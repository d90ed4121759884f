"""The heap of ``test_granular_heap``: a jittered column of spheres released on the ground, and the angle of
its slope (shared with ``scripts/heap_reference_mujoco.py``, which simulates the same column in MuJoCo)."""
from __future__ import annotations

import numpy as np

R, DENSITY, FRICTION, ROLLING = 0.01, 1600.0, 0.6, 0.5  # radius (m), kg/m^3, Coulomb, rolling (of r_eff)
SECONDS = 1.5


def column(nx: int = 5, layers: int = 12, seed: int = 0) -> np.ndarray:
    """(nx * nx * layers, 3) centres: a square column 2.1 radii apart, jittered sideways by up to 0.1 r."""
    rng = np.random.default_rng(seed)
    g = np.stack(np.meshgrid(np.arange(nx), np.arange(nx), np.arange(layers), indexing="ij"), -1)
    p = (g.reshape(-1, 3) - [(nx - 1) / 2, (nx - 1) / 2, 0]) * 2.1 * R
    p[:, 2] += R + 0.002
    p[:, :2] += rng.uniform(-0.1 * R, 0.1 * R, (len(p), 2))
    return p


def heap_angle(p: np.ndarray) -> tuple[float, float]:
    """(slope angle in degrees, height in m) of a heap of spheres of radius R: the highest sphere top in
    each ring one diameter wide about the heap's axis, a line fitted to the rings between 15 % and 85 % of
    the height."""
    c = p[:, :2].mean(axis=0)
    rho = np.linalg.norm(p[:, :2] - c, axis=1)
    top = p[:, 2] + R
    ring = np.floor(rho / (2 * R)).astype(int)
    rb, zb = [], []
    for k in np.unique(ring):
        m = ring == k
        q = np.argmax(top[m])
        rb.append(rho[m][q])
        zb.append(top[m][q])
    rb, zb = np.array(rb), np.array(zb)
    H = float(zb.max())
    sel = (zb < 0.85 * H) & (zb > 0.15 * H)
    if sel.sum() < 3:
        return float("nan"), H
    slope = np.polyfit(rb[sel], zb[sel], 1)[0]
    return float(np.degrees(np.arctan(-slope))), H
