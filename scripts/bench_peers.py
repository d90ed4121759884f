"""The peers our rigid-body benchmarks run against, set up once: MuJoCo (``run_mujoco``) and Blender's rigid
body world, Bullet (``run_blender``), for a pile of one-body shapes (box, sphere, capsule, cylinder, mesh
hull) on a ground plane (MuJoCo: or a height field), and the pile's layout (``layout``).

Each engine's world is built before the clock starts (Blender's at frame 1, MuJoCo's compiled model); the
runs return (wall seconds, CPU seconds of this process, the bodies' final centre heights (n,), a line of
solver facts). Shapes: box ``BOX`` m cubes, sphere r 0.15, capsule r 0.1 with a 0.2 m cylinder, cylinder
r 0.15 h 0.3, mesh: the hull of the given points; 1 kg each, friction 0.8, no restitution.
"""
from __future__ import annotations

import math
import time

import numpy as np

FPS, SUBSTEPS = 60, 4
DT = 1.0 / (FPS * SUBSTEPS)
LAYERS = 4
BOX = 0.3


def layout(n: int, seed: int = 7):
    """Positions (n, 3) and quaternions (n, 4, w x y z): columns of LAYERS on a 0.5 m grid, dropped from
    0.5 m + 0.45 m per layer, random orientations."""
    rng = np.random.default_rng(seed)
    side = int(math.ceil(math.sqrt(math.ceil(n / LAYERS))))
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    pos = np.zeros((n, 3))
    for i in range(n):
        c, layer = divmod(i, LAYERS)
        pos[i] = ((c % side - (side - 1) / 2) * 0.5 + rng.uniform(-0.05, 0.05),
                  (c // side - (side - 1) / 2) * 0.5 + rng.uniform(-0.05, 0.05), 0.5 + 0.45 * layer)
    return pos, quat


def mujoco_module():
    try:
        import mujoco
        return mujoco
    except Exception:
        return None


def run_mujoco(kinds, pos, quat, frames: int, hull=None, heightfield=None):
    """MuJoCo (its default solver) stepping the pile ``(frames - 1) * SUBSTEPS`` times; ``hull``: the
    mesh shape's points (V, 3); ``heightfield``: (heights [y, x] (n, n), size m) instead of the plane."""
    import mujoco
    h = BOX / 2
    geoms = {"box": f'<geom type="box" size="{h} {h} {h}" mass="1" friction="0.8"/>',
             "sphere": '<geom type="sphere" size="0.15" mass="1" friction="0.8"/>',
             "capsule": '<geom type="capsule" size="0.1 0.1" mass="1" friction="0.8"/>',
             "cylinder": '<geom type="cylinder" size="0.15 0.15" mass="1" friction="0.8"/>',
             "mesh": '<geom type="mesh" mesh="pebble" mass="1" friction="0.8"/>'}
    bodies = "".join(f'<body pos="{p[0]} {p[1]} {p[2]}" quat="{q[0]} {q[1]} {q[2]} {q[3]}"><freejoint/>'
                     f'{geoms[k]}</body>' for p, q, k in zip(pos, quat, kinds))
    asset = ""
    if hull is not None:
        asset += f'<mesh name="pebble" vertex="{" ".join(f"{v:.9g}" for v in np.ravel(hull))}"/>'
    if heightfield is not None:
        hs, size = heightfield
        lo, hi = float(hs.min()), float(hs.max())
        data = " ".join(f"{(v - lo) / (hi - lo):.9g}" for v in hs.ravel())
        asset += (f'<hfield name="terrain" nrow="{hs.shape[0]}" ncol="{hs.shape[1]}" size="{size / 2} {size / 2} '
                  f'{hi - lo} 0.1" elevation="{data}"/>')
        floor = f'<geom type="hfield" hfield="terrain" pos="0 0 {lo}" friction="0.8"/>'
    else:
        floor = '<geom type="plane" size="20 20 0.1" friction="0.8"/>'
    xml = (f'<mujoco><option timestep="{DT}"/><asset>{asset}</asset><worldbody>{floor}{bodies}'
           f'</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range((frames - 1) * SUBSTEPS):
        mujoco.mj_step(model, data)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    solver = ("PGS", "CG", "Newton")[model.opt.solver]
    return wall, cpu, data.xpos[1:, 2].copy(), f"solver {solver}, iterations {model.opt.iterations}"


def run_blender(kinds, pos, quat, frames: int, hull=None):
    """Blender's rigid body world (point cache 1..frames, SUBSTEPS substeps per frame, its default solver
    iterations) stepped by ``scene.frame_set(f)``, the ground a passive 40 m box; Bullet sizes primitive
    shapes from the object's bounds, so each body is a unit cube scaled to its shape's box (the mesh hull:
    the points themselves)."""
    import bpy
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = FPS
    scene.frame_start, scene.frame_end = 1, frames
    bpy.ops.rigidbody.world_add()
    rbw = scene.rigidbody_world
    rbw.collection = bpy.data.collections.new("RigidBodyWorld")
    rbw.substeps_per_frame = SUBSTEPS
    rbw.point_cache.frame_start, rbw.point_cache.frame_end = 1, frames

    def mesh_of(name, verts, faces=()):
        me = bpy.data.meshes.new(name)
        me.from_pydata([tuple(v) for v in verts], [], list(faces))
        me.update()
        return me

    cube = mesh_of("cube", [(x, y, z) for x in (-.5, .5) for y in (-.5, .5) for z in (-.5, .5)],
                   [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)])
    pebble = mesh_of("pebble", hull) if hull is not None else None
    ground_ob = bpy.data.objects.new("Ground", cube)
    ground_ob.scale = (40.0, 40.0, 1.0)
    ground_ob.location = (0.0, 0.0, -0.5)
    obs = [ground_ob]
    for i, kind in enumerate(kinds):
        ob = bpy.data.objects.new(f"B{i}", pebble if kind == "mesh" else cube)
        ob.location = pos[i]
        ob.rotation_mode = "QUATERNION"
        ob.rotation_quaternion = quat[i]
        ob.scale = {"box": (BOX,) * 3, "sphere": (0.3,) * 3, "capsule": (0.2, 0.2, 0.4),
                    "cylinder": (0.3, 0.3, 0.3), "mesh": (1, 1, 1)}[kind]
        obs.append(ob)
    for ob in obs:
        scene.collection.objects.link(ob)
        rbw.collection.objects.link(ob)
    bpy.context.view_layer.update()
    ground_ob.rigid_body.type = "PASSIVE"
    ground_ob.rigid_body.collision_shape = "BOX"
    for ob, kind in zip(obs[1:], kinds):
        ob.rigid_body.collision_shape = {"box": "BOX", "sphere": "SPHERE", "capsule": "CAPSULE",
                                         "cylinder": "CYLINDER", "mesh": "CONVEX_HULL"}[kind]
        ob.rigid_body.mass = 1.0
    for ob in obs:
        ob.rigid_body.friction = 0.8
        ob.rigid_body.restitution = 0.0
    scene.frame_set(1)
    w0, c0 = time.perf_counter(), time.process_time()
    for f in range(1, frames + 1):
        scene.frame_set(f)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    z = np.array([ob.matrix_world.translation.z for ob in obs[1:]])
    return wall, cpu, z, f"iterations {rbw.solver_iterations}, substeps {rbw.substeps_per_frame}"
