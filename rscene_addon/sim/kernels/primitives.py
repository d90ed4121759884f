"""Contacts of the round primitives and planes, compiled, one pair per call: the rules and point sets of
``sim.narrowphase`` (sphere-sphere, sphere-box, sphere-capsule, sphere-cylinder, capsule-capsule and
sphere/capsule/cylinder against a plane). Each writes its points at ``count`` into the out arrays
(pair index, point, normal from geom a to geom b, separation) and returns the new count.

Scalar arithmetic only (see ``boxes``: array expressions compile a ufunc loop each)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .boxes import _reduce, closest_segments


@njit(cache=True)
def emit(p, x, y, z, nx, ny, nz, s, out_pair, out_pt, out_n, out_sep, count):
    out_pair[count] = p
    out_pt[count, 0], out_pt[count, 1], out_pt[count, 2] = x, y, z
    out_n[count, 0], out_n[count, 1], out_n[count, 2] = nx, ny, nz
    out_sep[count] = s
    return count + 1


@njit(cache=True)
def balls(p, ax, ay, az, ra, bx, by, bz, rb, margin, out_pair, out_pt, out_n, out_sep, count):
    """Balls at a and b: normal a->b (+z when the centres coincide), the point midway between surfaces."""
    dx, dy, dz = bx - ax, by - ay, bz - az
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dist > 1e-12:
        nx, ny, nz = dx / dist, dy / dist, dz / dist
    else:
        nx, ny, nz = 0.0, 0.0, 1.0
    sep = dist - ra - rb
    if sep < margin:
        k = ra + 0.5 * sep
        count = emit(p, ax + nx * k, ay + ny * k, az + nz * k, nx, ny, nz, sep, out_pair, out_pt, out_n, out_sep,
                     count)
    return count


@njit(cache=True)
def segment(pos, rot, size, g):
    """A capsule's (or cylinder's) axis ends a, b: the centre -/+ the local z axis times the half height."""
    hh = size[g, 1]
    ax = pos[g, 0] - rot[g, 0, 2] * hh
    ay = pos[g, 1] - rot[g, 1, 2] * hh
    az = pos[g, 2] - rot[g, 2, 2] * hh
    bx = pos[g, 0] + rot[g, 0, 2] * hh
    by = pos[g, 1] + rot[g, 1, 2] * hh
    bz = pos[g, 2] + rot[g, 2, 2] * hh
    return ax, ay, az, bx, by, bz


@njit(cache=True)
def closest_on_segment(px, py, pz, ax, ay, az, bx, by, bz):
    """``closest.closest_point_segment``: the point of a-b nearest p, and its parameter."""
    ux, uy, uz = bx - ax, by - ay, bz - az
    denom = ux * ux + uy * uy + uz * uz
    t = ((px - ax) * ux + (py - ay) * uy + (pz - az) * uz) / (denom if denom > 0 else 1.0)
    t = min(max(t, 0.0), 1.0)
    return ax + ux * t, ay + uy * t, az + uz * t, t


@njit(cache=True)
def sphere_sphere(p, ga, gb, pos, size, margin, out_pair, out_pt, out_n, out_sep, count):
    return balls(p, pos[ga, 0], pos[ga, 1], pos[ga, 2], size[ga, 0], pos[gb, 0], pos[gb, 1], pos[gb, 2],
                 size[gb, 0], margin, out_pair, out_pt, out_n, out_sep, count)


@njit(cache=True)
def sphere_capsule(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count):
    ax, ay, az, bx, by, bz = segment(pos, rot, size, gb)
    qx, qy, qz, _ = closest_on_segment(pos[ga, 0], pos[ga, 1], pos[ga, 2], ax, ay, az, bx, by, bz)
    return balls(p, pos[ga, 0], pos[ga, 1], pos[ga, 2], size[ga, 0], qx, qy, qz, size[gb, 0], margin,
                 out_pair, out_pt, out_n, out_sep, count)


@njit(cache=True)
def _local(pos, rot, g, x, y, z):
    """R_g^T (x - pos_g)."""
    dx, dy, dz = x - pos[g, 0], y - pos[g, 1], z - pos[g, 2]
    return (rot[g, 0, 0] * dx + rot[g, 1, 0] * dy + rot[g, 2, 0] * dz,
            rot[g, 0, 1] * dx + rot[g, 1, 1] * dy + rot[g, 2, 1] * dz,
            rot[g, 0, 2] * dx + rot[g, 1, 2] * dy + rot[g, 2, 2] * dz)


@njit(cache=True)
def _turn(rot, g, x, y, z):
    """R_g v."""
    return (rot[g, 0, 0] * x + rot[g, 0, 1] * y + rot[g, 0, 2] * z,
            rot[g, 1, 0] * x + rot[g, 1, 1] * y + rot[g, 1, 2] * z,
            rot[g, 2, 0] * x + rot[g, 2, 1] * y + rot[g, 2, 2] * z)


@njit(cache=True)
def _surface_emit(p, gb, pos, rot, r, sx, sy, sz, nx, ny, nz, sep, margin, out_pair, out_pt, out_n, out_sep,
                  count):
    """A sphere against a solid's local surface point s and outward normal n (both in gb's frame)."""
    if sep < margin:
        wx, wy, wz = _turn(rot, gb, nx, ny, nz)
        bx, by, bz = _turn(rot, gb, sx, sy, sz)
        h = 0.5 * sep
        count = emit(p, bx + pos[gb, 0] + wx * h, by + pos[gb, 1] + wy * h, bz + pos[gb, 2] + wz * h,
                     -wx, -wy, -wz, sep, out_pair, out_pt, out_n, out_sep, count)
    return count


@njit(cache=True)
def sphere_box(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count):
    r = size[ga, 0]
    c = _local(pos, rot, gb, pos[ga, 0], pos[ga, 1], pos[ga, 2])
    q = (min(max(c[0], -size[gb, 0]), size[gb, 0]), min(max(c[1], -size[gb, 1]), size[gb, 1]),
         min(max(c[2], -size[gb, 2]), size[gb, 2]))
    dx, dy, dz = c[0] - q[0], c[1] - q[1], c[2] - q[2]
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dist > 1e-12:
        return _surface_emit(p, gb, pos, rot, r, q[0], q[1], q[2], dx / dist, dy / dist, dz / dist, dist - r,
                             margin, out_pair, out_pt, out_n, out_sep, count)
    # inside: the face of least penetration
    k = 0
    best = size[gb, 0] - abs(c[0])
    for i in range(1, 3):
        pen = size[gb, i] - abs(c[i])
        if pen < best:
            best, k = pen, i
    sgn = 1.0 if c[k] >= 0 else -1.0
    s = [c[0], c[1], c[2]]
    n = [0.0, 0.0, 0.0]
    n[k] = sgn
    s[k] = sgn * size[gb, k]
    return _surface_emit(p, gb, pos, rot, r, s[0], s[1], s[2], n[0], n[1], n[2], -(best + r), margin,
                         out_pair, out_pt, out_n, out_sep, count)


@njit(cache=True)
def sphere_cylinder(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count):
    r = size[ga, 0]
    rad, hh = size[gb, 0], size[gb, 1]
    cx, cy, cz = _local(pos, rot, gb, pos[ga, 0], pos[ga, 1], pos[ga, 2])
    rho = math.hypot(cx, cy)
    if rho > 1e-12:
        ex, ey = cx / rho, cy / rho
    else:
        ex, ey = 1.0, 0.0
    scale = min(1.0, rad / max(rho, 1e-300))
    qx, qy, qz = cx * scale, cy * scale, min(max(cz, -hh), hh)
    dx, dy, dz = cx - qx, cy - qy, cz - qz
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dist > 1e-12:
        return _surface_emit(p, gb, pos, rot, r, qx, qy, qz, dx / dist, dy / dist, dz / dist, dist - r, margin,
                             out_pair, out_pt, out_n, out_sep, count)
    side_pen = rad - rho
    cap_pen = hh - abs(cz)
    if side_pen < cap_pen:
        return _surface_emit(p, gb, pos, rot, r, ex * rad, ey * rad, cz, ex, ey, 0.0, -(side_pen + r), margin,
                             out_pair, out_pt, out_n, out_sep, count)
    ez = 1.0 if cz >= 0 else -1.0
    return _surface_emit(p, gb, pos, rot, r, cx, cy, ez * hh, 0.0, 0.0, ez, -(cap_pen + r), margin,
                         out_pair, out_pt, out_n, out_sep, count)


@njit(cache=True)
def plane_of(pos, rot, g):
    """A plane geom's unit normal (its local z) and offset n . pos."""
    nx, ny, nz = rot[g, 0, 2], rot[g, 1, 2], rot[g, 2, 2]
    return nx, ny, nz, nx * pos[g, 0] + ny * pos[g, 1] + nz * pos[g, 2]


@njit(cache=True)
def sphere_plane(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count):
    nx, ny, nz, d = plane_of(pos, rot, gb)
    r = size[ga, 0]
    sep = nx * pos[ga, 0] + ny * pos[ga, 1] + nz * pos[ga, 2] - d - r
    if sep < margin:
        k = r + 0.5 * sep
        count = emit(p, pos[ga, 0] - nx * k, pos[ga, 1] - ny * k, pos[ga, 2] - nz * k, -nx, -ny, -nz, sep,
                     out_pair, out_pt, out_n, out_sep, count)
    return count


@njit(cache=True)
def emit_reduced(p, pts, sep, ok, n_pts, nx, ny, nz, max_points, keep, dmin, out_pair, out_pt, out_n, out_sep,
                 count):
    """The ``ok`` points of the first ``n_pts`` (deepest then farthest-point sampling past max_points), all
    with one normal, in their order (``narrowphase._emit_masked``)."""
    live = 0
    for c in range(n_pts):
        live += ok[c]
    if live > max_points:
        _reduce(pts[:n_pts], sep[:n_pts], ok[:n_pts], max_points, keep, dmin)
    for c in range(n_pts):
        if ok[c]:
            count = emit(p, pts[c, 0], pts[c, 1], pts[c, 2], nx, ny, nz, sep[c], out_pair, out_pt, out_n, out_sep,
                         count)
    return count


@njit(cache=True)
def capsule_plane(p, ga, gb, pos, rot, size, margin, max_points, pts, sep, ok, keep, dmin,
                  out_pair, out_pt, out_n, out_sep, count):
    nx, ny, nz, d = plane_of(pos, rot, gb)
    r = size[ga, 0]
    e = segment(pos, rot, size, ga)
    for c in range(2):
        x, y, z = e[3 * c], e[3 * c + 1], e[3 * c + 2]
        sep[c] = x * nx + y * ny + z * nz - d - r
        ok[c] = sep[c] < margin
        k = r + 0.5 * sep[c]
        pts[c, 0], pts[c, 1], pts[c, 2] = x - nx * k, y - ny * k, z - nz * k
    return emit_reduced(p, pts, sep, ok, 2, -nx, -ny, -nz, max_points, keep, dmin, out_pair, out_pt, out_n,
                        out_sep, count)


@njit(cache=True)
def cylinder_plane(p, ga, gb, pos, rot, size, margin, max_points, pts, sep, ok, keep, dmin,
                   out_pair, out_pt, out_n, out_sep, count):
    nx, ny, nz, d = plane_of(pos, rot, gb)
    rad, hh = size[ga, 0], size[ga, 1]
    ax, ay, az = rot[ga, 0, 2], rot[ga, 1, 2], rot[ga, 2, 2]
    na = nx * ax + ny * ay + nz * az
    ux, uy, uz = -(nx - ax * na), -(ny - ay * na), -(nz - az * na)
    un = math.sqrt(ux * ux + uy * uy + uz * uz)
    if un > 1e-9:
        ux, uy, uz = ux / un, uy / un, uz / un
    else:
        ux, uy, uz = rot[ga, 0, 0], rot[ga, 1, 0], rot[ga, 2, 0]
    wx, wy, wz = ay * uz - az * uy, az * ux - ax * uz, ax * uy - ay * ux
    c = 0
    for sgn in (-1.0, 1.0):
        cx, cy, cz = pos[ga, 0] + ax * (sgn * hh), pos[ga, 1] + ay * (sgn * hh), pos[ga, 2] + az * (sgn * hh)
        for j in range(4):
            if j == 0:
                dx, dy, dz = ux, uy, uz
            elif j == 1:
                dx, dy, dz = -ux, -uy, -uz
            elif j == 2:
                dx, dy, dz = wx, wy, wz
            else:
                dx, dy, dz = -wx, -wy, -wz
            x, y, z = cx + dx * rad, cy + dy * rad, cz + dz * rad
            sep[c] = x * nx + y * ny + z * nz - d
            ok[c] = sep[c] < margin
            h = 0.5 * sep[c]
            pts[c, 0], pts[c, 1], pts[c, 2] = x - nx * h, y - ny * h, z - nz * h
            c += 1
    return emit_reduced(p, pts, sep, ok, 8, -nx, -ny, -nz, max_points, keep, dmin, out_pair, out_pt, out_n,
                        out_sep, count)


@njit(cache=True)
def _any_tangent(x, y, z):
    """``tangent_basis(n)[0]``."""
    sign = 1.0 if z >= 0 else -1.0
    a = -1.0 / (sign + z)
    b = x * y * a
    return 1.0 + sign * x * x * a, sign * b, -sign * x


@njit(cache=True)
def _capsule_point(p, pa, pb, ra, rb, dax, day, daz, la, margin, out_pair, out_pt, out_n, out_sep, count):
    dx, dy, dz = pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dist > 1e-12:
        nx, ny, nz = dx / dist, dy / dist, dz / dist
    elif la > 1e-9:
        d = max(la, 1e-300)
        nx, ny, nz = _any_tangent(dax / d, day / d, daz / d)
    else:
        nx, ny, nz = _any_tangent(1.0, 0.0, 0.0)
    sep = dist - ra - rb
    if sep < margin:
        k = ra + 0.5 * sep
        count = emit(p, pa[0] + nx * k, pa[1] + ny * k, pa[2] + nz * k, nx, ny, nz, sep, out_pair, out_pt, out_n,
                     out_sep, count)
    return count


@njit(cache=True)
def capsule_capsule(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count):
    """Closest points of the axes; two points at the ends of the overlap when the axes are parallel."""
    a = segment(pos, rot, size, ga)
    b = segment(pos, rot, size, gb)
    a0, a1 = np.array(a[:3]), np.array(a[3:])
    b0, b1 = np.array(b[:3]), np.array(b[3:])
    ra, rb = size[ga, 0], size[gb, 0]
    dax, day, daz = a1[0] - a0[0], a1[1] - a0[1], a1[2] - a0[2]
    dbx, dby, dbz = b1[0] - b0[0], b1[1] - b0[1], b1[2] - b0[2]
    la = math.sqrt(dax * dax + day * day + daz * daz)
    lb = math.sqrt(dbx * dbx + dby * dby + dbz * dbz)
    if la > 1e-9 and lb > 1e-9:
        ux, uy, uz = dax / la, day / la, daz / la
        vx, vy, vz = dbx / lb, dby / lb, dbz / lb
        cx, cy, cz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        if math.sqrt(cx * cx + cy * cy + cz * cz) < 1e-3:
            s0 = (b0[0] - a0[0]) * ux + (b0[1] - a0[1]) * uy + (b0[2] - a0[2]) * uz
            s1 = (b1[0] - a0[0]) * ux + (b1[1] - a0[1]) * uy + (b1[2] - a0[2]) * uz
            lo, hi = max(min(s0, s1), 0.0), min(max(s0, s1), la)
            if hi > lo + 1e-6:
                pa = np.empty(3)
                pb = np.empty(3)
                for t in (lo, hi):
                    pa[0], pa[1], pa[2] = a0[0] + ux * t, a0[1] + uy * t, a0[2] + uz * t
                    qx, qy, qz, _ = closest_on_segment(pa[0], pa[1], pa[2], b0[0], b0[1], b0[2], b1[0], b1[1],
                                                       b1[2])
                    pb[0], pb[1], pb[2] = qx, qy, qz
                    count = _capsule_point(p, pa, pb, ra, rb, dax, day, daz, la, margin, out_pair, out_pt, out_n,
                                           out_sep, count)
                return count
    s, t = closest_segments(a0, a1, b0, b1)
    pa = np.array((a0[0] + dax * s, a0[1] + day * s, a0[2] + daz * s))
    pb = np.array((b0[0] + dbx * t, b0[1] + dby * t, b0[2] + dbz * t))
    return _capsule_point(p, pa, pb, ra, rb, dax, day, daz, la, margin, out_pair, out_pt, out_n, out_sep, count)
