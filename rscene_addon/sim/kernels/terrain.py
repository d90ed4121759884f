"""Contacts against height fields, compiled, one pair per call: ``narrowphase.round_heightfield`` (spheres
and capsules: closest points of the core segment and the terrain triangles near it) and
``narrowphase.polytope_heightfield`` (polytope vertices over the surface, terrain samples inside the
polytope), the same candidates in the same order.

Height fields travel packed (``pack``): ``hf_of[g]``, per field (x0, y0, dx, dy, nx, ny, zmin, zmax) and
its heights[y, x] (with the centre's z) as one flat run."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .boxes import _reduce
from .convex import closest_on_triangle, world_poly
from .order import argsort
from .primitives import closest_segments, emit, segment


def pack(geom_hfield):
    """(hf_of (G,), params (H, 8), h_start (H + 1,), heights (sum nx * ny,)) of the height fields."""
    hf_of = np.full(len(geom_hfield), -1, np.int64)
    params, runs = [], []
    for g, hf in enumerate(geom_hfield):
        if hf is None:
            continue
        hf_of[g] = len(params)
        params.append((hf.x0, hf.y0, hf.dx, hf.dy, hf.nx, hf.ny, hf.zmin, hf.zmax))
        runs.append(np.asarray(hf.heights, np.float64).ravel())
    start = np.concatenate(([0], np.cumsum([len(r) for r in runs]))).astype(np.int64)
    return (hf_of, np.array(params, np.float64).reshape(-1, 8), start,
            np.concatenate(runs) if runs else np.zeros(0))


@njit(cache=True)
def _height(hfs, k, i, j):
    _, prm, start, heights = hfs
    return heights[start[k] + j * int(prm[k, 4]) + i]


@njit(cache=True)
def height_normal(hfs, k, x, y):
    """``HeightField.height_normal`` at one point: (z, nx, ny, nz, inside)."""
    prm = hfs[1]
    x0, y0, dx, dy, nx, ny = prm[k, 0], prm[k, 1], prm[k, 2], prm[k, 3], int(prm[k, 4]), int(prm[k, 5])
    u = (x - x0) / dx
    v = (y - y0) / dy
    inside = u >= 0 and u <= nx - 1 and v >= 0 and v <= ny - 1
    i = min(max(int(math.floor(u)), 0), nx - 2)
    j = min(max(int(math.floor(v)), 0), ny - 2)
    fu = min(max(u - i, 0.0), 1.0)
    fv = min(max(v - j, 0.0), 1.0)
    z00, z10 = _height(hfs, k, i, j), _height(hfs, k, i + 1, j)
    z01, z11 = _height(hfs, k, i, j + 1), _height(hfs, k, i + 1, j + 1)
    if fu >= fv:
        z = z00 + fu * (z10 - z00) + fv * (z11 - z10)
        a, b = -(z10 - z00) * dy, -(z11 - z10) * dx
    else:
        z = z00 + fv * (z01 - z00) + fu * (z11 - z01)
        a, b = -(z11 - z01) * dy, -(z01 - z00) * dx
    c = dx * dy
    ln = math.sqrt(a * a + b * b + c * c)
    return z, a / ln, b / ln, c / ln, inside


@njit(cache=True)
def triangles(hfs, k, lo, hi):
    """``HeightField.triangles``: (T, 3, 3) of the cells over lo..hi in x/y and within lo..hi in z, the
    cells' first triangles then their second ones."""
    prm = hfs[1]
    x0, y0, dx, dy, nx, ny = prm[k, 0], prm[k, 1], prm[k, 2], prm[k, 3], int(prm[k, 4]), int(prm[k, 5])
    i0 = max(int(math.floor((lo[0] - x0) / dx)), 0)
    i1 = min(int(math.floor((hi[0] - x0) / dx)), nx - 2)
    j0 = max(int(math.floor((lo[1] - y0) / dy)), 0)
    j1 = min(int(math.floor((hi[1] - y0) / dy)), ny - 2)
    if i1 < i0 or j1 < j0:
        return np.zeros((0, 3, 3))
    cells = (i1 - i0 + 1) * (j1 - j0 + 1)
    out = np.empty((2 * cells, 3, 3))
    T = 0
    for second in range(2):
        for j in range(j0, j1 + 1):
            for i in range(i0, i1 + 1):
                xa, ya = x0 + i * dx, y0 + j * dy
                xb, yb = xa + dx, ya + dy
                z00, z10 = _height(hfs, k, i, j), _height(hfs, k, i + 1, j)
                z01, z11 = _height(hfs, k, i, j + 1), _height(hfs, k, i + 1, j + 1)
                out[T, 0, 0], out[T, 0, 1], out[T, 0, 2] = xa, ya, z00
                if second == 0:
                    out[T, 1, 0], out[T, 1, 1], out[T, 1, 2] = xb, ya, z10
                    out[T, 2, 0], out[T, 2, 1], out[T, 2, 2] = xb, yb, z11
                else:
                    out[T, 1, 0], out[T, 1, 1], out[T, 1, 2] = xb, yb, z11
                    out[T, 2, 0], out[T, 2, 1], out[T, 2, 2] = xa, yb, z01
                zlo = min(out[T, 0, 2], min(out[T, 1, 2], out[T, 2, 2]))
                zhi = max(out[T, 0, 2], max(out[T, 1, 2], out[T, 2, 2]))
                if zhi >= lo[2] and zlo <= hi[2]:
                    T += 1
    return out[:T]


@njit(cache=True)
def _in_triangle(x, y, z, tri, nx, ny, nz):
    """``narrowphase._in_triangle`` for one point and triangle (3, 3)."""
    for e in range(3):
        P, Q = tri[e], tri[(e + 1) % 3]
        ex, ey, ez = Q[0] - P[0], Q[1] - P[1], Q[2] - P[2]
        wx, wy, wz = x - P[0], y - P[1], z - P[2]
        c = (ey * wz - ez * wy) * nx + (ez * wx - ex * wz) * ny + (ex * wy - ey * wx) * nz
        if not c >= 0:
            return False
    return True


@njit(cache=True)
def _segment_triangle(seg, tri, out):
    """``closest.segment_triangles`` for segment seg (2, 3) and triangle tri (3, 3): writes the point on
    the segment and the one on the triangle into out (2, 3); returns (distance, pierced)."""
    best = np.inf
    A, B, C = tri[0], tri[1], tri[2]
    for k in range(2):
        q = closest_on_triangle(seg[k, 0], seg[k, 1], seg[k, 2], A, B, C)
        d = math.sqrt((seg[k, 0] - q[0]) ** 2 + (seg[k, 1] - q[1]) ** 2 + (seg[k, 2] - q[2]) ** 2)
        if d < best:
            best = d
            for x in range(3):
                out[0, x] = seg[k, x]
                out[1, x] = q[x]
    a, b = seg[0], seg[1]
    for e in range(3):
        e0, e1 = tri[e], tri[(e + 1) % 3]
        s, t = closest_segments(a, b, e0, e1)
        sx, sy, sz = a[0] + (b[0] - a[0]) * s, a[1] + (b[1] - a[1]) * s, a[2] + (b[2] - a[2]) * s
        qx, qy, qz = e0[0] + (e1[0] - e0[0]) * t, e0[1] + (e1[1] - e0[1]) * t, e0[2] + (e1[2] - e0[2]) * t
        d = math.sqrt((sx - qx) ** 2 + (sy - qy) ** 2 + (sz - qz) ** 2)
        if d < best:
            best = d
            out[0, 0], out[0, 1], out[0, 2], out[1, 0], out[1, 1], out[1, 2] = sx, sy, sz, qx, qy, qz
    ux, uy, uz = B[0] - A[0], B[1] - A[1], B[2] - A[2]
    vx, vy, vz = C[0] - A[0], C[1] - A[1], C[2] - A[2]
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    da = nx * (a[0] - A[0]) + ny * (a[1] - A[1]) + nz * (a[2] - A[2])
    db = nx * (b[0] - A[0]) + ny * (b[1] - A[1]) + nz * (b[2] - A[2])
    if da * db < 0:
        t = da / (da - db)
        x, y, z = a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t
        if _in_triangle(x, y, z, tri, nx, ny, nz):
            out[0, 0], out[0, 1], out[0, 2], out[1, 0], out[1, 1], out[1, 2] = x, y, z, x, y, z
            return 0.0, True
    return best, False


@njit(cache=True)
def _emit_set(p, pts, nrm, sep, n, max_points, dedupe, out_pair, out_pt, out_n, out_sep, count):
    """Candidates (deduplicated on 1e-6 m, deepest first, when ``dedupe``) reduced to ``max_points``, normals
    negated (terrain outward -> shape to terrain), in their order."""
    ok = np.ones(n, np.bool_)
    if dedupe:
        order = argsort(sep[:n])
        kept = np.zeros(n, np.bool_)
        for oi in range(n):
            i = order[oi]
            far = True
            for j in range(n):
                if kept[j]:
                    d = math.sqrt((pts[i, 0] - pts[j, 0]) ** 2 + (pts[i, 1] - pts[j, 1]) ** 2
                                  + (pts[i, 2] - pts[j, 2]) ** 2)
                    if not d > 1e-6:
                        far = False
                        break
            if far:
                kept[i] = True
        ok = kept
    live = 0
    for i in range(n):
        live += ok[i]
    if live > max_points:
        _reduce(pts[:n], sep[:n], ok, max_points, np.empty(n, np.bool_), np.empty(n))
    for i in range(n):
        if ok[i]:
            count = emit(p, pts[i, 0], pts[i, 1], pts[i, 2], -nrm[i, 0], -nrm[i, 1], -nrm[i, 2], sep[i], out_pair,
                         out_pt, out_n, out_sep, count)
    return count


@njit(cache=True)
def round_heightfield(p, ga, gb, hfs, pos, rot, size, is_sphere, margin, max_points, out_pair, out_pt, out_n,
                      out_sep, count):
    k = hfs[0][gb]
    r = size[ga, 0]
    seg = np.empty((2, 3))
    ext = np.empty(3)
    if is_sphere:
        for x in range(3):
            seg[0, x] = seg[1, x] = pos[ga, x]
            ext[x] = r
    else:
        e = segment(pos, rot, size, ga)
        for x in range(3):
            seg[0, x], seg[1, x] = e[x], e[3 + x]
            ext[x] = abs(rot[ga, x, 2]) * size[ga, 1] + size[ga, 0]
    lo = np.empty(3)
    hi = np.empty(3)
    for x in range(3):
        lo[x] = pos[ga, x] - ext[x] - margin
        hi[x] = pos[ga, x] + ext[x] + margin
    tris = triangles(hfs, k, lo, hi)
    T = tris.shape[0]
    if T == 0:
        return count
    pts = np.empty((T, 3))
    nrm = np.empty((T, 3))
    sep = np.empty(T)
    sq = np.empty((2, 3))
    n = 0
    for t in range(T):
        tri = tris[t]
        A, B, C = tri[0], tri[1], tri[2]
        dist, pierced = _segment_triangle(seg, tri, sq)
        ux, uy, uz = B[0] - A[0], B[1] - A[1], B[2] - A[2]
        vx, vy, vz = C[0] - A[0], C[1] - A[1], C[2] - A[2]
        tx, ty, tz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        ln = max(math.sqrt(tx * tx + ty * ty + tz * tz), 1e-300)
        tx, ty, tz = tx / ln, ty / ln, tz / ln
        pa = tx * (seg[0, 0] - A[0]) + ty * (seg[0, 1] - A[1]) + tz * (seg[0, 2] - A[2])
        pb = tx * (seg[1, 0] - A[0]) + ty * (seg[1, 1] - A[1]) + tz * (seg[1, 2] - A[2])
        lw = 0 if pa <= pb else 1
        plow = min(pa, pb)
        deep = pierced or (plow < 0 and _in_triangle(seg[lw, 0] - tx * plow, seg[lw, 1] - ty * plow,
                                                      seg[lw, 2] - tz * plow, tri, tx, ty, tz))
        if deep:
            nx, ny, nz, s = tx, ty, tz, plow - r
            cx, cy, cz = seg[lw, 0], seg[lw, 1], seg[lw, 2]
        else:
            if dist > 1e-9:
                nx, ny, nz = (sq[0, 0] - sq[1, 0]) / dist, (sq[0, 1] - sq[1, 1]) / dist, (sq[0, 2] - sq[1, 2]) / dist
            else:
                nx, ny, nz = tx, ty, tz
            s = dist - r
            cx, cy, cz = sq[0, 0], sq[0, 1], sq[0, 2]
        if s < margin:
            h = r + 0.5 * s
            pts[n, 0], pts[n, 1], pts[n, 2] = cx - nx * h, cy - ny * h, cz - nz * h
            nrm[n, 0], nrm[n, 1], nrm[n, 2] = nx, ny, nz
            sep[n] = s
            n += 1
    if n == 0:
        return count
    return _emit_set(p, pts, nrm, sep, n, min(max_points, 4), True, out_pair, out_pt, out_n, out_sep, count)


@njit(cache=True)
def polytope_heightfield(p, ga, gb, polys, hfs, pos, rot, margin, max_points, sc, out_pair, out_pt, out_n,
                         out_sep, count):
    k = hfs[0][gb]
    wv, wn, wo, wd = sc[0], sc[1], sc[2], sc[3]
    nv, nf, _ = world_poly(polys[0][ga], ga, pos, rot, polys[1], polys[2], polys[3], polys[4], polys[5], polys[11],
                           polys[12], wv, wn, wo, wd)
    prm = hfs[1]
    x0, y0, dx, dy, nx, ny = prm[k, 0], prm[k, 1], prm[k, 2], prm[k, 3], int(prm[k, 4]), int(prm[k, 5])
    lo = np.empty(3)
    hi = np.empty(3)
    for x in range(3):
        lo[x], hi[x] = np.inf, -np.inf
    for i in range(nv):
        for x in range(3):
            lo[x] = min(lo[x], wv[i, x])
            hi[x] = max(hi[x], wv[i, x])
    for x in range(3):
        lo[x] -= margin
        hi[x] += margin
    i0 = max(int(math.ceil((lo[0] - x0) / dx)), 0)
    i1 = min(int(math.floor((hi[0] - x0) / dx)), nx - 1)
    j0 = max(int(math.ceil((lo[1] - y0) / dy)), 0)
    j1 = min(int(math.floor((hi[1] - y0) / dy)), ny - 1)
    grid = max(i1 - i0 + 1, 0) * max(j1 - j0 + 1, 0)
    cap = nv + grid
    pts = np.empty((cap, 3))
    nrm = np.empty((cap, 3))
    sep = np.empty(cap)
    n = 0
    for i in range(nv):
        z, tx, ty, tz, inside = height_normal(hfs, k, wv[i, 0], wv[i, 1])
        s = (wv[i, 2] - z) * tz
        if inside and s < margin:
            h = 0.5 * s
            pts[n, 0], pts[n, 1], pts[n, 2] = wv[i, 0] - tx * h, wv[i, 1] - ty * h, wv[i, 2] - tz * h
            nrm[n, 0], nrm[n, 1], nrm[n, 2] = tx, ty, tz
            sep[n] = s
            n += 1
    for j in range(j0, j1 + 1):
        for i in range(i0, i1 + 1):
            gx, gy, gz = x0 + i * dx, y0 + j * dy, _height(hfs, k, i, j)
            if not (gz >= lo[2] and gz <= hi[2]):
                continue
            f = 0
            best = -np.inf
            for q in range(nf):
                d = gx * wn[q, 0] + gy * wn[q, 1] + gz * wn[q, 2] - wo[q]
                if d > best:
                    best, f = d, q
            if best < margin and -wn[f, 2] > 0.3:
                h = 0.5 * best
                pts[n, 0], pts[n, 1], pts[n, 2] = gx - wn[f, 0] * h, gy - wn[f, 1] * h, gz - wn[f, 2] * h
                nrm[n, 0], nrm[n, 1], nrm[n, 2] = -wn[f, 0], -wn[f, 1], -wn[f, 2]
                sep[n] = best
                n += 1
    if n == 0:
        return count
    return _emit_set(p, pts, nrm, sep, n, max_points, False, out_pair, out_pt, out_n, out_sep, count)
