"""Where a robot link can touch things: sample points of its collision shapes in the link's frame.

Rows ``x, y, z, radius``; the contact solvers (``link_contacts`` against the world, ``link_pairs`` between
links) test these points, a point with a radius as a sphere.
"""
from __future__ import annotations

import numpy as np

from ..scene_geometry.mesh_files import MeshFormatError, read_mesh
from .geometry import reduce_points

__all__ = ["MESH_CONTACT_DIRECTIONS", "contact_points", "lowest_point"]

MESH_CONTACT_DIRECTIONS = 34  # sample directions whose extreme mesh vertices become contact points


def _mesh_vertices(path: str) -> np.ndarray:
    try:
        return read_mesh(path)[0]
    except (MeshFormatError, OSError, ValueError):
        return np.zeros((0, 3))


def contact_points(link) -> np.ndarray:
    """Collision sample points of a link in its own frame as rows x, y, z, radius: box vertices (radius 0),
    sphere centres and capsule end centres with their radius (the contact point is the sphere's bottom),
    cylinder rims (8 points per end), ellipsoid extreme points, up to ~40 hull-extreme vertices of a mesh
    (scaled; an unreadable mesh gives none). Planes give no points."""
    pts = []
    for shape in link.collisions:
        g, t = shape.geometry, shape.origin
        if g.kind == "box":
            hx, hy, hz = (0.5 * float(s) for s in g.size)
            for sx in (-1, 1):
                for sy in (-1, 1):
                    for sz in (-1, 1):
                        p = t @ np.array([sx * hx, sy * hy, sz * hz, 1.0])
                        pts.append([*p[:3], 0.0])
        elif g.kind == "sphere":
            pts.append([*t[:3, 3], float(g.radius)])
        elif g.kind == "capsule":
            for s in (-0.5, 0.5):
                p = t @ np.array([0.0, 0.0, s * float(g.length), 1.0])
                pts.append([*p[:3], float(g.radius)])
        elif g.kind == "cylinder":
            r, h = float(g.radius), 0.5 * float(g.length)
            for z in (-h, h):
                for k in range(8):
                    a = 2 * np.pi * k / 8
                    p = t @ np.array([r * np.cos(a), r * np.sin(a), z, 1.0])
                    pts.append([*p[:3], 0.0])
        elif g.kind == "mesh" and g.path:
            verts = _mesh_vertices(g.path)
            if len(verts):
                v = reduce_points(verts * np.asarray(g.scale, dtype=float), MESH_CONTACT_DIRECTIONS)
                for p in v @ t[:3, :3].T + t[:3, 3]:
                    pts.append([*p, 0.0])
        elif g.kind == "ellipsoid":
            # sample the six extreme points of the ellipsoid (half extents)
            for axis in range(3):
                for s in (-1, 1):
                    v = np.zeros(3)
                    v[axis] = s * float(g.size[axis])
                    p = t @ np.append(v, 1.0)
                    pts.append([*p[:3], 0.0])
    return np.array(pts, dtype=float).reshape(-1, 4)


def lowest_point(robot, poses: dict) -> float | None:
    """The lowest z any collision shape of ``robot`` reaches with its links at ``poses`` (world 4x4 by link
    name), None when it has no collision shapes: how far to lift it to stand on z = 0."""
    lowest = None
    for name, link in robot.links.items():
        pts = contact_points(link)
        if not len(pts) or name not in poses:
            continue
        z = (pts[:, :3] @ poses[name][2, :3] + poses[name][2, 3]) - pts[:, 3]
        lowest = float(z.min()) if lowest is None else min(lowest, float(z.min()))
    return lowest
