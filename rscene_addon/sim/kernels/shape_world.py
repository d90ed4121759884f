"""``box_world.step`` for worlds with spheres, capsules, cylinders, hulls or height fields: the same parts in
the same order, its contacts from ``narrow.shape_contacts`` (for box-box and box-plane pairs exactly
``contacts.box_contacts``). Kept apart so that only worlds with such shapes compile their narrowphase."""
from __future__ import annotations

from numba import njit

from .box_world import begin, candidates, contact_geoms, finish, wake
from .narrow import shape_contacts


@njit(cache=True)
def _detect(lin, ang, radius, awake, dynamic, kinematic, g_pos, g_rot, gbody, gtype, gsize, glocal, is_plane,
            plane_z, ggroup, gmask, margin0, max_pts, dt, fixed, fixed_lo, fixed_hi, polys, hfs, big):
    """``World._detect``: (pairs (P, 2), pair index, point, normal, separation) of the contacts."""
    pairs, margins = candidates(lin, ang, radius, awake, dynamic, kinematic, g_pos, g_rot, gbody, gtype, gsize,
                                glocal, is_plane, plane_z, ggroup, gmask, margin0, dt, fixed, fixed_lo, fixed_hi)
    pidx, point, normal, sep = shape_contacts(pairs, gtype, g_pos, g_rot, gsize, margins, max_pts, polys, hfs, big)
    return pairs, pidx, point, normal, sep


@njit(cache=True)
def step(pos, quat, lin, ang, sleeping, quiet, island, ext_f, ext_t,
         dynamic, kinematic, inv_mass, inv_I_body, radius, gravity,
         gbody, gtype, gsize, glocal, gmaterial, ggroup, gmask, is_plane, plane_z, material_table,
         cache_key, cache_local, cache_impulse, touching, at_body, geom_pos, geom_rot, fixed, fixed_lo, fixed_hi,
         polys, hfs, big, dt, margin0, max_pts, vel_iterations, pos_iterations, tolerance, forward, erp,
         sleeping_enabled, sleep_lin, sleep_ang, sleep_steps, warm_match):
    """One step of any one-geom shapes on planes and height fields: ``box_world.step``'s arguments and
    return value; ``polys``/``hfs``: ``convex.pack`` / ``terrain.pack``, ``big``: ``convex.largest``."""
    V0, awake, R, Iw, g_pos, g_rot = begin(pos, quat, lin, ang, sleeping, ext_f, ext_t, dynamic, inv_mass,
                                           inv_I_body, gravity, gbody, at_body, geom_pos, geom_rot, dt)
    pairs, pidx, point, normal, sep = _detect(lin, ang, radius, awake, dynamic, kinematic, g_pos, g_rot, gbody,
                                              gtype, gsize, glocal, is_plane, plane_z, ggroup, gmask, margin0,
                                              max_pts, dt, fixed, fixed_lo, fixed_hi, polys, hfs, big)
    ga, gb, A, B = contact_geoms(pairs, pidx, gbody)
    if wake(A, B, lin, awake, dynamic, kinematic, sleeping, quiet, island, gravity, dt):
        pairs, pidx, point, normal, sep = _detect(lin, ang, radius, awake, dynamic, kinematic, g_pos, g_rot,
                                                  gbody, gtype, gsize, glocal, is_plane, plane_z, ggroup, gmask,
                                                  margin0, max_pts, dt, fixed, fixed_lo, fixed_hi, polys, hfs, big)
        ga, gb, A, B = contact_geoms(pairs, pidx, gbody)
    return finish(pos, quat, lin, ang, sleeping, quiet, island, dynamic, kinematic, inv_mass, radius, gmaterial,
                  material_table, cache_key, cache_local, cache_impulse, touching, V0, awake, R, Iw, ga, gb, A, B,
                  point, normal, sep, dt, vel_iterations, pos_iterations, tolerance, forward, erp, sleeping_enabled,
                  sleep_lin, sleep_ang, sleep_steps, warm_match)
