"""Collision shapes and their mass properties: primitives, convex polytopes (box, cylinder prism,
mesh hull) and height fields.

Shapes are described in their own frame: a sphere at the origin; a box centred with half extents;
cylinder and capsule along ``+z``, centred; a convex polytope by vertices and outward faces.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .mathutil import tangent_basis

# Shape type codes (``Model.geom_type``).
SPHERE, BOX, CAPSULE, CYLINDER, CONVEX, PLANE, HEIGHTFIELD = range(7)
TYPE_NAMES = ("sphere", "box", "capsule", "cylinder", "convex", "plane", "heightfield")

CYLINDER_SEGMENTS = 24  # sides of the prism that stands in for a cylinder in polytope pairs


@dataclass
class Polytope:
    """A convex polytope in its local frame.

    vertices (V, 3); faces: list of index arrays, counter-clockwise seen from outside; normals (F, 3)
    outward unit; offsets (F,) with ``normals @ x <= offsets`` inside; edges (E, 2) vertex pairs;
    edge_dirs (D, 3) unit directions of the edges (parallel edges share one); edge_dir_of (E,) index
    into edge_dirs; edge_faces (E, 2) the two faces that meet at each edge (the same face twice for an
    edge of one face only): the edge's arc on the Gauss map, between their normals.
    """

    vertices: np.ndarray
    faces: list
    normals: np.ndarray
    offsets: np.ndarray
    edges: np.ndarray
    edge_dirs: np.ndarray
    edge_dir_of: np.ndarray
    radius: float = 0.0
    tri_index: np.ndarray = field(default=None, repr=False)  # (T, 3) fan triangulation of the faces
    edge_faces: np.ndarray = field(default=None, repr=False)

    @classmethod
    def from_faces(cls, vertices: np.ndarray, faces: list) -> "Polytope":
        vertices = np.asarray(vertices, dtype=np.float64)
        faces = [np.asarray(f, dtype=np.int64) for f in faces]
        normals, offsets, tris = [], [], []
        centre = vertices.mean(axis=0)
        for fi, f in enumerate(faces):
            p = vertices[f]
            q = p[np.r_[1:len(f), 0]]  # each vertex's successor
            # Newell's method: robust normal of a planar polygon
            nx = np.sum((p[:, 1] - q[:, 1]) * (p[:, 2] + q[:, 2]))
            ny = np.sum((p[:, 2] - q[:, 2]) * (p[:, 0] + q[:, 0]))
            nz = np.sum((p[:, 0] - q[:, 0]) * (p[:, 1] + q[:, 1]))
            n = np.array([nx, ny, nz])
            n /= max(np.linalg.norm(n), 1e-300)
            if float(n @ (p.mean(axis=0) - centre)) < 0:  # wrong winding: make it counter-clockwise
                n = -n
                f = f[::-1].copy()
                faces[fi] = f
            normals.append(n)
            offsets.append(float(np.max(p @ n)))
            for k in range(1, len(f) - 1):
                tris.append((f[0], f[k], f[k + 1]))
        edge_set: dict[tuple[int, int], list] = {}
        for fi, f in enumerate(faces):
            for a, b in zip(f.tolist(), np.roll(f, -1).tolist()):
                edge_set.setdefault((min(a, b), max(a, b)), []).append(fi)
        edges = np.array(list(edge_set), dtype=np.int64).reshape(-1, 2)
        edge_faces = np.array([(fs[0], fs[-1]) for fs in edge_set.values()], dtype=np.int64).reshape(-1, 2)
        dirs: list[np.ndarray] = []
        dir_of = np.zeros(len(edges), dtype=np.int64)
        for i, (a, b) in enumerate(edges):
            d = vertices[b] - vertices[a]
            d /= max(np.linalg.norm(d), 1e-300)
            for j, e in enumerate(dirs):
                if abs(abs(float(d @ e)) - 1.0) < 1e-9:
                    dir_of[i] = j
                    break
            else:
                dir_of[i] = len(dirs)
                dirs.append(d)
        return cls(vertices, faces, np.array(normals), np.array(offsets), edges,
                   np.array(dirs).reshape(-1, 3), dir_of, float(np.max(np.linalg.norm(vertices, axis=1))),
                   np.array(tris, dtype=np.int64).reshape(-1, 3), edge_faces)


def box_polytope(half: np.ndarray) -> Polytope:
    hx, hy, hz = (float(v) for v in half)
    v = np.array([[sx * hx, sy * hy, sz * hz] for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)])
    # vertex index = ix + 2*iy + 4*iz
    faces = [[0, 4, 6, 2], [1, 3, 7, 5],  # -x, +x
             [0, 1, 5, 4], [2, 6, 7, 3],  # -y, +y
             [0, 2, 3, 1], [4, 5, 7, 6]]  # -z, +z
    return Polytope.from_faces(v, faces)


def prism_polytope(radius: float, half_height: float, segments: int = CYLINDER_SEGMENTS) -> Polytope:
    """A regular prism along z inscribed in the cylinder (radius, half height)."""
    a = 2 * np.pi * np.arange(segments) / segments
    ring = np.stack((radius * np.cos(a), radius * np.sin(a)), axis=1)
    v = np.concatenate((np.column_stack((ring, np.full(segments, -half_height))),
                        np.column_stack((ring, np.full(segments, half_height)))))
    faces = [list(range(segments - 1, -1, -1)), list(range(segments, 2 * segments))]
    for i in range(segments):
        j = (i + 1) % segments
        faces.append([i, j, segments + j, segments + i])
    return Polytope.from_faces(v, faces)


# ---------------------------------------------------------------------------------------------------------
# Convex hull


def _fibonacci_directions(n: int) -> np.ndarray:
    i = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * i / n)
    theta = np.pi * (1 + 5 ** 0.5) * i
    return np.stack((np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)), axis=1)


def reduce_points(points: np.ndarray, directions: int) -> np.ndarray:
    """The points that are extreme along ``directions`` sample directions (a subset of hull vertices)."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) <= directions:
        return points
    d = _fibonacci_directions(directions)
    d = np.concatenate((d, np.eye(3), -np.eye(3)))
    centred = points - points.mean(axis=0)
    idx = np.unique(np.argmax(centred @ d.T, axis=0))
    return points[idx]


def convex_hull(points: np.ndarray, max_points: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Convex hull of a point set: (vertices (V, 3), triangles (T, 3) counter-clockwise from outside).

    Incremental algorithm, deterministic (points are added in a fixed order). More than ``max_points``
    input points are first reduced to the extreme points along sample directions. A flat or degenerate
    set is thickened slightly so that the hull has volume.
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts) == 0:
        raise ValueError("convex hull of no points")
    extent = float(np.max(np.ptp(pts, axis=0))) if len(pts) > 1 else 0.0
    scale = max(extent, 1e-6)
    pts = np.unique(np.round(pts / (scale * 1e-9)) * (scale * 1e-9), axis=0)
    if len(pts) > max_points:
        pts = reduce_points(pts, max_points // 4)
    pts = _thicken_if_flat(pts, scale)
    eps = 1e-10 * scale
    # initial tetrahedron
    i0 = int(np.argmin(pts[:, 0]))
    d = np.linalg.norm(pts - pts[i0], axis=1)
    i1 = int(np.argmax(d))
    line = pts[i1] - pts[i0]
    line /= np.linalg.norm(line)
    rel = pts - pts[i0]
    dl = np.linalg.norm(rel - np.outer(rel @ line, line), axis=1)
    i2 = int(np.argmax(dl))
    n = np.cross(pts[i1] - pts[i0], pts[i2] - pts[i0])
    n /= np.linalg.norm(n)
    dp = rel @ n
    i3 = int(np.argmax(np.abs(dp)))
    if dp[i3] > 0:
        i1, i2 = i2, i1
    faces = [(i0, i1, i2), (i0, i3, i1), (i1, i3, i2), (i2, i3, i0)]
    F = np.array(faces, dtype=np.int64)
    centre = pts[[i0, i1, i2, i3]].mean(axis=0)
    order = np.argsort(-np.linalg.norm(pts - centre, axis=1), kind="stable")
    used = {i0, i1, i2, i3}
    for p_idx in order.tolist():
        if p_idx in used:
            continue
        a, b, c = pts[F[:, 0]], pts[F[:, 1]], pts[F[:, 2]]
        nrm = np.cross(b - a, c - a)
        nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-300)
        vis = np.einsum("ij,ij->i", nrm, pts[p_idx] - a) > eps
        if not vis.any():
            continue
        visible = F[vis]
        edges = {}
        for f in visible.tolist():
            for e in ((f[0], f[1]), (f[1], f[2]), (f[2], f[0])):
                edges[e] = None
        horizon = [e for e in edges if (e[1], e[0]) not in edges]
        new = np.array([(e[0], e[1], p_idx) for e in horizon], dtype=np.int64)
        F = np.concatenate((F[~vis], new))
        used.add(p_idx)
    verts_idx = np.unique(F)
    remap = -np.ones(len(pts), dtype=np.int64)
    remap[verts_idx] = np.arange(len(verts_idx))
    return pts[verts_idx], remap[F]


def _thicken_if_flat(pts: np.ndarray, scale: float) -> np.ndarray:
    if len(pts) >= 4:
        c = pts - pts.mean(axis=0)
        _, s, vt = np.linalg.svd(c, full_matrices=False)
        if s[-1] > 1e-7 * max(s[0], 1e-300) * math.sqrt(len(pts)):
            return pts
        normal = vt[-1]
    else:
        normal = np.array([0.0, 0.0, 1.0])
    t = 1e-3 * scale
    if len(pts) >= 3:
        base = pts
    else:
        t1, t2 = tangent_basis(normal)
        base = np.concatenate((pts, pts + t * t1, pts + t * t2))
    return np.concatenate((base + normal * t * 0.5, base - normal * t * 0.5))


def hull_polytope(points: np.ndarray, max_vertices: int = 64) -> Polytope:
    """A collision polytope from a point cloud: the hull of at most ~``max_vertices`` extreme points,
    with coplanar triangles merged into polygons."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    verts, tris = convex_hull(pts)
    if len(verts) > max_vertices:
        verts, tris = convex_hull(reduce_points(verts, max_vertices))
    return Polytope.from_faces(verts, merge_coplanar(verts, tris))


def merge_coplanar(verts: np.ndarray, tris: np.ndarray, tol: float = 1e-6) -> list:
    """Group hull triangles with the same plane into convex polygons (vertex lists, CCW from outside)."""
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    n = np.cross(b - a, c - a)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    d = np.einsum("ij,ij->i", n, a)
    scale = max(float(np.max(np.abs(verts))), 1e-9)
    groups: list[list[int]] = []
    reps: list[tuple[np.ndarray, float]] = []
    for t in range(len(tris)):
        for g, (gn, gd) in enumerate(reps):
            if float(gn @ n[t]) > 1 - tol and abs(gd - d[t]) < tol * scale:
                groups[g].append(t)
                break
        else:
            groups.append([t])
            reps.append((n[t], d[t]))
    faces = []
    for g, members in enumerate(groups):
        idx = np.unique(tris[members].ravel())
        if len(idx) == 3 and len(members) == 1:
            faces.append(tris[members[0]].tolist())
            continue
        gn = reps[g][0]
        t1, t2 = tangent_basis(gn)
        p = verts[idx]
        centre = p.mean(axis=0)
        ang = np.arctan2((p - centre) @ t2, (p - centre) @ t1)
        faces.append(idx[np.argsort(ang, kind="stable")].tolist())
    return faces


# ---------------------------------------------------------------------------------------------------------
# Mass properties (uniform density). Each returns (volume, centre of mass (3,), inertia about the centre
# of mass per unit density (3, 3)).


def sphere_mass(r: float):
    v = 4.0 / 3.0 * math.pi * r ** 3
    return v, np.zeros(3), np.eye(3) * (0.4 * v * r * r)


def box_mass(size: np.ndarray):
    sx, sy, sz = (float(s) for s in size)
    v = sx * sy * sz
    return v, np.zeros(3), np.diag([v * (sy * sy + sz * sz) / 12, v * (sx * sx + sz * sz) / 12,
                                    v * (sx * sx + sy * sy) / 12])


def cylinder_mass(r: float, h: float):
    v = math.pi * r * r * h
    ixx = v * (3 * r * r + h * h) / 12
    return v, np.zeros(3), np.diag([ixx, ixx, v * r * r / 2])


def capsule_mass(r: float, h: float):
    """Capsule along z: ``h`` is the distance between the hemisphere centres."""
    vc = math.pi * r * r * h
    vs = 4.0 / 3.0 * math.pi * r ** 3
    izz = vc * r * r / 2 + vs * 0.4 * r * r
    ixx = vc * (3 * r * r + h * h) / 12 + vs * (0.4 * r * r + h * h / 4 + 3 * h * r / 8)
    return vc + vs, np.zeros(3), np.diag([ixx, ixx, izz])


def mesh_mass(verts: np.ndarray, tris: np.ndarray):
    """Closed, outward-oriented triangle mesh (a hull): volume, centroid, inertia about the centroid."""
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    det = np.einsum("ij,ij->i", a, np.cross(b, c))
    vol = det / 6.0
    volume = float(vol.sum())
    if volume <= 0:
        lo, hi = verts.min(axis=0), verts.max(axis=0)
        v, _, inertia = box_mass(np.maximum(hi - lo, 1e-9))
        return v, (lo + hi) / 2, inertia
    com = (vol[:, None] * (a + b + c) / 4.0).sum(axis=0) / volume
    s = a + b + c
    cov = (vol[:, None, None] / 20.0) * (np.einsum("ij,ik->ijk", a, a) + np.einsum("ij,ik->ijk", b, b)
                                         + np.einsum("ij,ik->ijk", c, c) + np.einsum("ij,ik->ijk", s, s))
    cov = cov.sum(axis=0) - volume * np.outer(com, com)
    inertia = np.trace(cov) * np.eye(3) - cov
    return volume, com, inertia


def polytope_mass(poly: Polytope):
    return mesh_mass(poly.vertices, poly.tri_index)


def rotate_inertia(inertia: np.ndarray, rot: np.ndarray) -> np.ndarray:
    return rot @ inertia @ rot.T


def parallel_axis(inertia: np.ndarray, mass: float, offset: np.ndarray) -> np.ndarray:
    """Inertia about a point ``offset`` away from the centre of mass."""
    o = np.asarray(offset, dtype=np.float64)
    return inertia + mass * (float(o @ o) * np.eye(3) - np.outer(o, o))


# ---------------------------------------------------------------------------------------------------------
# Height field


class HeightField:
    """A sampled height map (``terrain_region``): heights[y, x] absolute z, on a regular grid.

    Sample (x, y) lies at ``x0 + x*dx``, ``y0 + y*dy``. Each cell is split along its (0,0)-(1,1)
    diagonal into two triangles.
    """

    def __init__(self, x_samples: int, y_samples: int, x_size: float, y_size: float,
                 center: tuple[float, float, float], heights: np.ndarray):
        self.nx, self.ny = int(x_samples), int(y_samples)
        self.x_size, self.y_size = float(x_size), float(y_size)
        self.center = np.asarray(center, dtype=np.float64)
        empty = heights is None or len(heights) == 0
        h = np.zeros(self.nx * self.ny) if empty else np.asarray(heights, float)
        self.heights = h.reshape(self.ny, self.nx) + self.center[2]
        self.x0 = self.center[0] - self.x_size / 2
        self.y0 = self.center[1] - self.y_size / 2
        self.dx = self.x_size / (self.nx - 1)
        self.dy = self.y_size / (self.ny - 1)
        self.zmin = float(self.heights.min())
        self.zmax = float(self.heights.max())

    @property
    def aabb(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.array([self.x0, self.y0, self.zmin]),
                np.array([self.x0 + self.x_size, self.y0 + self.y_size, self.zmax]))

    def grid_points(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Sample points (K, 3) inside the x/y range of an AABB."""
        i0 = max(int(math.ceil((lo[0] - self.x0) / self.dx)), 0)
        i1 = min(int(math.floor((hi[0] - self.x0) / self.dx)), self.nx - 1)
        j0 = max(int(math.ceil((lo[1] - self.y0) / self.dy)), 0)
        j1 = min(int(math.floor((hi[1] - self.y0) / self.dy)), self.ny - 1)
        if i1 < i0 or j1 < j0:
            return np.zeros((0, 3))
        xs = self.x0 + np.arange(i0, i1 + 1) * self.dx
        ys = self.y0 + np.arange(j0, j1 + 1) * self.dy
        zz = self.heights[j0:j1 + 1, i0:i1 + 1]
        X, Y = np.meshgrid(xs, ys)
        pts = np.stack((X.ravel(), Y.ravel(), zz.ravel()), axis=1)
        return pts[(pts[:, 2] >= lo[2]) & (pts[:, 2] <= hi[2])]

    def triangles(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Triangles (T, 3, 3) of the cells overlapping an AABB's x/y range, skipping those entirely
        below ``lo[2]``... or above ``hi[2]``."""
        i0 = max(int(math.floor((lo[0] - self.x0) / self.dx)), 0)
        i1 = min(int(math.floor((hi[0] - self.x0) / self.dx)), self.nx - 2)
        j0 = max(int(math.floor((lo[1] - self.y0) / self.dy)), 0)
        j1 = min(int(math.floor((hi[1] - self.y0) / self.dy)), self.ny - 2)
        if i1 < i0 or j1 < j0:
            return np.zeros((0, 3, 3))
        I, J = np.meshgrid(np.arange(i0, i1 + 1), np.arange(j0, j1 + 1))
        I, J = I.ravel(), J.ravel()
        x0 = self.x0 + I * self.dx
        y0 = self.y0 + J * self.dy
        x1, y1 = x0 + self.dx, y0 + self.dy
        H = self.heights
        z00, z10, z01, z11 = H[J, I], H[J, I + 1], H[J + 1, I], H[J + 1, I + 1]
        p00 = np.stack((x0, y0, z00), axis=1)
        p10 = np.stack((x1, y0, z10), axis=1)
        p01 = np.stack((x0, y1, z01), axis=1)
        p11 = np.stack((x1, y1, z11), axis=1)
        t1 = np.stack((p00, p10, p11), axis=1)
        t2 = np.stack((p00, p11, p01), axis=1)
        tris = np.concatenate((t1, t2))
        zlo = tris[:, :, 2].min(axis=1)
        zhi = tris[:, :, 2].max(axis=1)
        keep = (zhi >= lo[2]) & (zlo <= hi[2])
        return tris[keep]

    def height_normal(self, x: np.ndarray, y: np.ndarray):
        """Surface height (K,), unit normal (K, 3) and an inside mask (K,) at points (x, y)."""
        u = (np.asarray(x) - self.x0) / self.dx
        v = (np.asarray(y) - self.y0) / self.dy
        inside = (u >= 0) & (u <= self.nx - 1) & (v >= 0) & (v <= self.ny - 1)
        i = np.clip(np.floor(u).astype(np.int64), 0, self.nx - 2)
        j = np.clip(np.floor(v).astype(np.int64), 0, self.ny - 2)
        fu = np.clip(u - i, 0.0, 1.0)
        fv = np.clip(v - j, 0.0, 1.0)
        H = self.heights
        z00, z10, z01, z11 = H[j, i], H[j, i + 1], H[j + 1, i], H[j + 1, i + 1]
        lower = fu >= fv
        z = np.where(lower, z00 + fu * (z10 - z00) + fv * (z11 - z10),
                     z00 + fv * (z01 - z00) + fu * (z11 - z01))
        nx_ = np.where(lower, -(z10 - z00) * self.dy, -(z11 - z01) * self.dy)
        ny_ = np.where(lower, -(z11 - z10) * self.dx, -(z01 - z00) * self.dx)
        nz_ = np.full_like(nx_, self.dx * self.dy, dtype=np.float64)
        n = np.stack((nx_, ny_, nz_), axis=-1)
        n /= np.linalg.norm(n, axis=-1, keepdims=True)
        return z, n, inside
