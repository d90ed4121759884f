"""Build the simulation Model and initial State from a Scene, the way RaiSim's scene reader (and
Engine 2's RaisimBridge) would: solver settings, materials, height maps, bodies, compounds, wires,
granular systems and cloth.
"""
from __future__ import annotations

import os

import numpy as np

from ..model.fields import Fields
from ..scene_geometry.cloth_mesh import cloth_mesh
from ..scene_geometry.inline_mesh import has_inline_mesh, inline_mesh
from ..scene_geometry.mesh_files import MeshFormatError, read_mesh, read_rasset
from ..scene_geometry.particles import granular_particles
from ..scene_geometry.primitives import primitive_size
from . import geometry as geo
from .mathutil import quat_normalize, quat_rotate, quat_to_matrix
from .physics_model import (ALL_GROUPS, DYNAMIC, KINEMATIC, STATIC, TERRAIN_GROUP, ClothSpec, GranularSpec, Model,
                    SolverSettings, State, WireSpec)

_MODES = {"static": STATIC, "fixed": STATIC, "kinematic": KINEMATIC, "dynamic": DYNAMIC, "movable": DYNAMIC}
_PRIMS = {"plane": "ground", "cube": "box", "static_mesh": "mesh", "half_space": "ground"}
_WIRE_KINDS = {"stiff": "stiff", "stiff_wire": "stiff", "compliant": "compliant", "soft": "compliant",
               "compliant_wire": "compliant", "custom": "custom", "custom_wire": "custom"}




# What a record may ask of the physics: far beyond real scenes, well inside what float64 steps without
# overflowing (positions times velocities times masses stay below 1e308).
MAX_LENGTH = 1e9  # m: positions, shape sizes and offsets
MAX_ACCELERATION = 1e6  # m/s^2: gravity
MIN_MASS, MAX_MASS = 1e-12, 1e15  # kg of a dynamic body


def _prescaled(quat) -> np.ndarray:
    """A quaternion divided by its largest component first, so that normalising a huge one (1e200, ...)
    does not overflow to inf/NaN: any nonzero finite quaternion is a rotation."""
    q = np.asarray(quat, float)
    top = np.abs(q).max(initial=0.0) if q.size else 0.0
    return q / top if np.isfinite(top) and top > 0 else q


class _Builder:
    def __init__(self, scene, seed: int | None = None):
        self.scene = scene
        self.seed = None if seed is None else int(seed)  # None: the granular fill's fixed default
        self.warnings: list[str] = []
        self.bodies: list[dict] = []
        self.geoms: list[dict] = []
        self.materials: dict[str, int] = {"default": 0}
        self.record_body: dict[int, int] = {}
        # one polytope per distinct box / prism shape: a pile of 1000 equal cubes shares one (the
        # narrowphase only reads them; building each took most of a 1000-cube world's set-up)
        self._polytopes: dict[tuple, geo.Polytope] = {}

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    # -- materials --------------------------------------------------------------------------------------
    def material(self, name: str) -> int:
        name = name or "default"
        if name not in self.materials:
            self.materials[name] = len(self.materials)
        return self.materials[name]

    # -- bodies and geoms -------------------------------------------------------------------------------
    def add_body(self, name, mode, pos, quat, mass, record=None) -> int:
        self.bodies.append(dict(name=name, mode=mode, pos=np.asarray(pos, float),
                                quat=quat_normalize(_prescaled(quat)),
                                mass=float(mass), com=None, inertia=None, geoms=[]))
        index = len(self.bodies) - 1
        if record is not None:
            self.record_body[id(record)] = index
        return index

    def add_geom(self, body, gtype, pos, quat, size, *, poly=None, hfield=None, group=1, mask=ALL_GROUPS,
                 material="default", mass_props=None):
        g = dict(body=body, type=gtype, pos=np.asarray(pos, float),
                 quat=quat_normalize(_prescaled(quat)),
                 size=np.asarray(size, float), poly=poly, hfield=hfield, group=int(group) & ALL_GROUPS,
                 mask=int(mask) & ALL_GROUPS, material=self.material(material), mass_props=mass_props)
        self.geoms.append(g)
        self.bodies[body]["geoms"].append(len(self.geoms) - 1)
        return g

    def add_primitive(self, body, prim, pos, quat, dims, **kw):
        """dims: box full sizes (3,); sphere (r,); cylinder/capsule (r, height)."""
        extent = np.abs(np.asarray(dims, float))
        if not (np.isfinite(extent).all() and extent.max(initial=0.0) <= MAX_LENGTH):  # r**3 would overflow
            raise ValueError(f"{self.bodies[body]['name']}: {prim} size {tuple(extent)} is beyond {MAX_LENGTH:g} m")
        if prim == "box":
            size = np.maximum(np.abs(np.asarray(dims, float)), 1e-6)
            poly = self._shared(("box", *size / 2), lambda: geo.box_polytope(size / 2))
            return self.add_geom(body, geo.BOX, pos, quat, size / 2, poly=poly, mass_props=geo.box_mass(size), **kw)
        if prim == "sphere":
            r = max(abs(float(dims[0])), 1e-6)
            return self.add_geom(body, geo.SPHERE, pos, quat, (r, 0, 0), mass_props=geo.sphere_mass(r), **kw)
        if prim == "cylinder":
            r, h = max(abs(float(dims[0])), 1e-6), max(abs(float(dims[1])), 1e-6)
            poly = self._shared(("prism", r, h / 2), lambda: geo.prism_polytope(r, h / 2))
            return self.add_geom(body, geo.CYLINDER, pos, quat, (r, h / 2, 0), poly=poly,
                                 mass_props=geo.cylinder_mass(r, h), **kw)
        if prim == "capsule":
            r, h = max(abs(float(dims[0])), 1e-6), max(abs(float(dims[1])), 0.0)
            if h <= 1e-9:
                return self.add_geom(body, geo.SPHERE, pos, quat, (r, 0, 0), mass_props=geo.sphere_mass(r),
                                     **kw)
            return self.add_geom(body, geo.CAPSULE, pos, quat, (r, h / 2, 0),
                                 mass_props=geo.capsule_mass(r, h), **kw)
        raise ValueError(prim)

    def _shared(self, key: tuple, make) -> geo.Polytope:
        """The polytope of shape ``key`` (kind, dimensions) built by ``make()`` once per build."""
        poly = self._polytopes.get(key)
        if poly is None:
            poly = self._polytopes[key] = make()
        return poly

    def add_hull(self, body, points, pos, quat, **kw):
        poly = geo.hull_polytope(points)
        verts, tris = geo.convex_hull(points, max_points=4096)
        return self.add_geom(body, geo.CONVEX, pos, quat, (poly.radius, 0, 0), poly=poly,
                             mass_props=geo.mesh_mass(verts, tris), **kw)

    # -- finishing ---------------------------------------------------------------------------------------
    def finish(self, dt, gravity, solver, wires, granular, cloth) -> tuple[Model, State]:
        n = len(self.bodies)
        mass = np.zeros(n)
        inv_mass = np.zeros(n)
        inertia = np.zeros((n, 3, 3))
        inv_inertia = np.zeros((n, 3, 3))
        com = np.zeros((n, 3))
        modes = np.array([b["mode"] for b in self.bodies], dtype=np.int8)
        for i, b in enumerate(self.bodies):
            mass[i], com[i], inertia[i] = self._mass_props(b)
        dyn = modes == DYNAMIC
        self._check_magnitudes(gravity, mass, inertia, dyn)
        inv_mass[dyn] = 1.0 / mass[dyn]
        if dyn.any():  # one batched call (the same LAPACK solve per matrix) instead of one per body
            inv_inertia[dyn] = np.linalg.inv(inertia[dyn])
        G = len(self.geoms)
        gpos = np.zeros((G, 3))
        gquat = np.zeros((G, 4))
        local_aabb = np.zeros((G, 2, 3))
        gradius = np.zeros(G)
        for k, g in enumerate(self.geoms):
            gpos[k] = g["pos"] - com[g["body"]]
            gquat[k] = g["quat"]
            if g["poly"] is not None:
                v = g["poly"].vertices
                local_aabb[k] = ((v.max(0) + v.min(0)) / 2, (v.max(0) - v.min(0)) / 2)
                gradius[k] = g["poly"].radius
            elif g["type"] == geo.SPHERE:
                gradius[k] = g["size"][0]
            elif g["type"] == geo.CAPSULE:
                gradius[k] = g["size"][0] + g["size"][1]
        body_radius = np.zeros(n)
        for k, g in enumerate(self.geoms):
            if g["type"] in (geo.PLANE, geo.HEIGHTFIELD):
                continue
            body_radius[g["body"]] = max(body_radius[g["body"]], np.linalg.norm(gpos[k]) + gradius[k])
        K = len(self.materials)
        table = np.empty((K, K, 5))
        table[:, :] = np.asarray(solver.default_material, float)
        for (a, b_), props in self._pairs.items():
            ia, ib = self.materials.get(a), self.materials.get(b_)
            if ia is None or ib is None:
                continue
            table[ia, ib] = table[ib, ia] = props
        model = Model(
            dt=dt, gravity=np.asarray(gravity, float), solver=solver,
            body_name=[b["name"] for b in self.bodies], body_mode=modes, body_mass=mass,
            body_inv_mass=inv_mass,
            body_inertia=inertia, body_inv_inertia=inv_inertia, body_com=com, body_radius=body_radius,
            geom_body=np.array([g["body"] for g in self.geoms], dtype=np.int64),
            geom_type=np.array([g["type"] for g in self.geoms], dtype=np.int64),
            geom_pos=gpos, geom_quat=gquat, geom_size=np.array([g["size"] for g in self.geoms]).reshape(G, 3),
            geom_poly=[g["poly"] for g in self.geoms], geom_hfield=[g["hfield"] for g in self.geoms],
            geom_local_aabb=local_aabb, geom_radius=gradius,
            geom_group=np.array([g["group"] for g in self.geoms], dtype=np.uint64),
            geom_mask=np.array([g["mask"] for g in self.geoms], dtype=np.uint64),
            geom_material=np.array([g["material"] for g in self.geoms], dtype=np.int64),
            material_names=list(self.materials), material_table=table,
            wires=wires, granular=granular, cloth=cloth, warnings=self.warnings)
        # wires were given in the record frame: move attachment points to the centre-of-mass frame
        for w in wires:
            w.local_a = w.local_a - com[w.body_a]
            w.local_b = w.local_b - com[w.body_b]
        quat = np.array([b["quat"] for b in self.bodies]).reshape(n, 4)
        pos = np.array([b["pos"] for b in self.bodies]).reshape(n, 3) + quat_rotate(quat, com)
        state = State(
            time=solver.world_time, position=pos, quaternion=quat, linear_velocity=np.zeros((n, 3)),
            angular_velocity=np.zeros((n, 3)), sleeping=np.zeros(n, dtype=bool),
            quiet_steps=np.zeros(n, dtype=np.int64),
            particles=[s.positions.copy() for s in granular],
            particle_velocity=[np.broadcast_to(s.velocity, s.positions.shape).copy() for s in granular],
            particle_omega=[np.zeros_like(s.positions) for s in granular],
            cloth=[c.vertices.copy() for c in cloth],
            cloth_velocity=[np.zeros_like(c.vertices) for c in cloth])
        return model, state

    def _check_magnitudes(self, gravity, mass, inertia, dyn) -> None:
        """Refuse, naming the record, what is finite in the file but overflows in the physics (gravity
        -1e308, a radius of 1e308, a mass of 1e-320 whose inverse is infinite): the step would turn it into
        NaN positions. Raises ValueError."""
        g = np.asarray(gravity, float)
        if not (np.isfinite(g).all() and np.linalg.norm(g) <= MAX_ACCELERATION):
            raise ValueError(f"gravity {tuple(g)}: beyond {MAX_ACCELERATION:g} m/s^2, the step would overflow")
        for i, b in enumerate(self.bodies):
            name = b["name"]
            if not (np.isfinite(b["pos"]).all() and np.abs(b["pos"]).max(initial=0) <= MAX_LENGTH):
                raise ValueError(f"{name}: position {tuple(b['pos'])} is beyond {MAX_LENGTH:g} m")
            for gi in b["geoms"]:
                geom = self.geoms[gi]
                if geom["type"] in (geo.PLANE, geo.HEIGHTFIELD):
                    continue
                extent = np.concatenate([geom["pos"], geom["size"]])
                if not (np.isfinite(extent).all() and np.abs(extent).max(initial=0) <= MAX_LENGTH):
                    raise ValueError(f"{name}: a shape's size or offset is beyond {MAX_LENGTH:g} m")
            if dyn[i] and not (MIN_MASS <= mass[i] <= MAX_MASS and np.isfinite(inertia[i]).all()
                               and np.trace(inertia[i]) > 1e-30):
                raise ValueError(f"{name}: mass {mass[i]:g} kg (inertia {np.abs(inertia[i]).max():g}) is outside "
                                 f"[{MIN_MASS:g}, {MAX_MASS:g}] kg: its inverse or its impulses would overflow")

    def _mass_props(self, b):
        """Mass, centre of mass (record frame) and inertia about it for a body."""
        m = b["mass"] if b["mass"] > 0 else 1.0
        if b["com"] is not None and b["inertia"] is not None:
            return m, b["com"], b["inertia"]
        vol_total = 0.0
        first = np.zeros(3)
        second = np.zeros((3, 3))
        parts = []
        for gi in b["geoms"]:
            g = self.geoms[gi]
            if g["mass_props"] is None:
                continue
            v, c, I = g["mass_props"]
            R = quat_to_matrix(g["quat"])
            cw = g["pos"] + R @ c
            parts.append((v, cw, R @ I @ R.T))
            vol_total += v
            first += v * cw
        if vol_total <= 0:
            c = b["com"] if b["com"] is not None else np.zeros(3)
            return m, c, np.eye(3) * m * 0.01 if b["inertia"] is None else b["inertia"]
        c = first / vol_total if b["com"] is None else b["com"]
        rho = m / vol_total
        for v, cw, I in parts:
            second += rho * geo.parallel_axis(I, v, cw - c)
        inertia = second if b["inertia"] is None else b["inertia"]
        return m, c, inertia


# ---------------------------------------------------------------------------------------------------------


def _records(scene, tag):
    try:
        return scene.of(tag)
    except Exception:
        return []


def solver_settings(scene) -> SolverSettings:
    recs = _records(scene, "solver")
    s = SolverSettings()
    if not recs:
        return s
    f = Fields(recs[-1])
    s.iterations = f.int("iterations", 80)
    cmi = f.int("contactMaxIterations", 80)
    if cmi != 80:
        s.iterations = cmi
    s.tolerance = f.num("tolerance", 1e-7)
    ct = f.num("contactThreshold", 1e-7)
    if ct != 1e-7:
        s.tolerance = ct
    s.erp = f.num("erp", 0.2)
    s.erp2 = f.num("erp2", 0.0)
    s.default_material = (f.num("defaultFriction", 0.8), f.num("defaultRestitution", 0.0),
                          f.num("defaultRestitutionThreshold", 0.001), f.num("defaultStaticFriction", 0.8),
                          f.num("defaultStaticFrictionVelocityThreshold", 0.001))
    s.max_contacts_per_pair = max(1, f.int("maxContactsPerPair", 8))
    s.sleeping_enabled = f.flag("sleepingEnabled", True)
    s.sleep_linear = f.num("sleepingLinearVelocityThreshold", 0.002)
    s.sleep_angular = f.num("sleepingAngularVelocityThreshold", 0.01)
    s.sleep_quiet_steps = max(1, f.int("sleepingQuietSteps", 5))
    s.world_time = f.num("worldTime", 0.0)
    s.forward_first = f.flag("fixedContactSolverIterationOrder", False)
    s.contact_margin = max(f.num("sweptCcdSpeculativeMargin", 1e-4), 0.005)
    return s


def _setting(scene, tag, name, default):
    recs = _records(scene, tag)
    if not recs:
        return default
    f = Fields(recs[-1])
    return f.vec3(name, default) if isinstance(default, tuple) else f.num(name, default)


def build(scene, *, dt: float | None = None, seed: int | None = None) -> tuple[Model, State]:
    """The Model and initial State for ``scene`` (a ``rscene_addon.model.Scene``). ``seed`` drives the
    simulation's only random choice, the jitter of a granular box fill (None: a fixed seed)."""
    b = _Builder(scene, seed)
    solver = solver_settings(scene)
    step = dt if dt is not None else _setting(scene, "time_step", "dt", 0.0025)
    if not step > 0:
        b.warn(f"time step {step} is not positive: using 0.0025")
        step = 0.0025
    gravity = _setting(scene, "gravity", "gravity", (0.0, 0.0, -9.81))
    b._pairs = {}
    for rec in _records(scene, "contact_material"):
        f = Fields(rec)
        props = np.array([f.num("friction", 0.8), f.num("restitution", 0.0),
                          f.num("restitutionThreshold", 0.001), f.num("staticFriction", 0.8),
                          f.num("staticFrictionVelocityThreshold", 0.001)])
        a, c = f.text("materialA", "default"), f.text("materialB", "default")
        b.material(a)
        b.material(c)
        b._pairs[(a, c)] = props
    for rec in _records(scene, "terrain_region"):
        _terrain(b, rec)
    for rec in _records(scene, "object"):
        _object(b, scene, rec)
    compounds = _records(scene, "compound")
    children = _records(scene, "compound_child")
    for rec in compounds:
        _compound(b, scene, rec, children)
    wires = []
    for rec in _records(scene, "wire"):
        w = _wire(b, scene, rec)
        if w is not None:
            wires.append(w)
    granular = []
    for rec in _records(scene, "granular"):
        spec = _granular(b, rec)
        if spec is not None:
            granular.append(spec)
    cloth = []
    for rec in _records(scene, "deformable"):
        spec = _deformable(b, scene, rec)
        if spec is not None:
            cloth.append(spec)
    return b.finish(step, gravity, solver, wires, granular, cloth)


def _terrain(b: _Builder, rec) -> None:
    f = Fields(rec)
    path = f.text("path", "terrain")
    nx, ny = f.int("xSamples", 0), f.int("ySamples", 0)
    xs, ys = f.num("xSize", 0.0), f.num("ySize", 0.0)
    if nx < 2 or ny < 2 or xs <= 0 or ys <= 0:
        b.warn(f"{path}: terrain needs at least 2x2 samples and a positive size; skipped")
        return
    if not f.flag("collidable", True):
        return
    heights = f.numbers("heights")
    if len(heights) not in (0, nx * ny):
        b.warn(f"{path}: {len(heights)} heights for {nx}x{ny} samples; skipped")
        return
    hf = geo.HeightField(nx, ny, xs, ys, f.vec3("center"), heights)
    body = b.add_body(path, STATIC, (0, 0, 0), (1, 0, 0, 0), 1.0, rec)
    b.add_geom(body, geo.HEIGHTFIELD, (0, 0, 0), (1, 0, 0, 0), (0, 0, 0), hfield=hf, group=TERRAIN_GROUP,
               mask=ALL_GROUPS, material=f.text("contactMaterial", "default"))


def _mode(f: Fields, rec) -> int | None:
    """Body mode, or None for an object without a physics body."""
    mode = (f.text("bodyMode", "") or "").lower()
    if mode in ("visual_only", "visualonly", "visual"):
        return None
    if not f.flag("collidable", True):
        return None
    if mode in _MODES:
        return _MODES[mode]
    if f.flag("visualOnly", False):
        return None
    if f.flag("locked", False) or f.flag("fixed", False):
        return STATIC
    return DYNAMIC


def _object(b: _Builder, scene, rec) -> None:
    f = Fields(rec)
    path = f.text("path", "object")
    mode = _mode(f, rec)
    if mode is None:
        return
    prim = f.text("primitive", "box").lower()
    prim = _PRIMS.get(prim, prim)
    pos, quat, scale = f.vec3("position"), f.quat("quaternion"), f.vec3("scale", (1, 1, 1))
    radius, height = f.num("radius", 0.5), f.num("height", 1.0)
    mass = f.num("mass", 1.0)
    group, mask = f.group("collisionGroup", 1), f.group("collisionMask", ALL_GROUPS)
    cmat = f.text("contactMaterial", "default")
    if mode == DYNAMIC and not mass > 0:
        b.warn(f"{path}: a dynamic body needs a positive mass; using 1 kg")
        mass = 1.0
    if prim == "ground":
        body = b.add_body(path, STATIC, (0, 0, 0), (1, 0, 0, 0), 1.0, rec)
        b.add_geom(body, geo.PLANE, (0, 0, pos[2]), (1, 0, 0, 0), (0, 0, 0), group=TERRAIN_GROUP, mask=mask,
                   material=cmat)
        return
    kw = dict(group=group, mask=mask, material=cmat)
    if prim in ("box", "sphere", "cylinder", "capsule"):
        body = b.add_body(path, mode, pos, quat, mass, rec)
        b.add_primitive(body, prim, (0, 0, 0), (1, 0, 0, 0), primitive_size(prim, scale, radius, height), **kw)
        return
    if prim != "mesh":
        b.warn(f"{path}: unknown primitive {prim!r}; using a box")
        body = b.add_body(path, mode, pos, quat, mass, rec)
        b.add_primitive(body, "box", (0, 0, 0), (1, 0, 0, 0), scale, **kw)
        return
    ref = f.text("collisionMeshPath", "") or f.text("renderMeshPath", "") or f.text("mesh", "")
    file = scene.resolve(ref) if ref else ""
    body = b.add_body(path, mode, pos, quat, mass, rec)
    if file.lower().endswith(".rasset") and os.path.isfile(file):
        if mode != STATIC:
            kind = ('', 'kinematic', 'dynamic')[mode]
            b.warn(f"{path}: a .rasset object must be static in RaiSim; simulated as a {kind} compound")
        try:
            shapes = read_rasset(file).shapes
        except (MeshFormatError, OSError, ValueError) as exc:
            b.warn(f"{path}: cannot read {file}: {exc}; using a box from the scale")
            b.add_primitive(body, "box", (0, 0, 0), (1, 0, 0, 0), scale, **kw)
            return
        for shape in shapes:
            _rasset_shape(b, body, shape, scale, path, **kw)
        if not shapes:
            b.warn(f"{path}: {file} has no collision shapes")
        return
    points = None
    if has_inline_mesh(rec):  # the record's own triangles (CoppeliaSim <vertices>/<indices>), before any file
        try:
            points = inline_mesh(rec)[0] * float(np.mean(scale))  # scaled as a mesh file is
        except MeshFormatError as exc:
            b.warn(f"{exc}; using a box from the scale")
    elif file and os.path.isfile(file):
        try:
            verts, _ = read_mesh(file)
            points = verts * float(np.mean(scale))  # RaiSim scales meshes by the mean of the three
        except (MeshFormatError, OSError, ValueError) as exc:
            b.warn(f"{path}: cannot read mesh {file}: {exc}; using a box from the scale")
    elif file:
        b.warn(f"{path}: mesh file {file} is missing; using a box from the scale")
    else:
        b.warn(f"{path}: mesh object without a mesh file; using a box from the scale")
    if points is None:
        b.add_primitive(body, "box", (0, 0, 0), (1, 0, 0, 0), scale, **kw)
        return
    mode_name = f.text("collisionMode", "") or f.text("meshCollision", "")
    if mode_name.lower() in ("original_mesh", "original", "triangle_mesh", "trimesh", "convexify", "coacd",
                             "convex_decomposition"):
        b.warn(f"{path}: collision mode {mode_name!r} is simulated as the convex hull")
    b.add_hull(body, points, (0, 0, 0), (1, 0, 0, 0), **kw)
    if mode == DYNAMIC and f.flag("customInertia", False):
        bd = b.bodies[body]
        bd["inertia"] = np.diag(np.maximum(f.vec3("inertiaDiagonal", (0, 0, 0)), 1e-9))
        bd["com"] = f.vec3("centerOfMass")


def _rasset_shape(b, body, shape, scale, path, **kw):
    scale = np.asarray(scale, float)
    pos = np.asarray(shape.position) * scale
    quat = np.asarray(shape.quaternion)
    s_mean = float(np.mean(scale))
    s_rad = float(np.mean(scale[:2]))
    if shape.type == "box":
        b.add_primitive(body, "box", pos, quat, np.asarray(shape.size) * scale, **kw)
    elif shape.type == "sphere":
        b.add_primitive(body, "sphere", pos, quat, (shape.radius * s_mean,), **kw)
    elif shape.type in ("cylinder", "capsule"):
        b.add_primitive(body, shape.type, pos, quat, (shape.radius * s_rad, shape.height * scale[2]), **kw)
    elif shape.type == "convex_mesh":
        try:
            verts, _ = read_mesh(shape.file)
        except (MeshFormatError, OSError, ValueError) as exc:
            b.warn(f"{path}: convex mesh {shape.file}: {exc}; shape skipped")
            return
        R = quat_to_matrix(quat_normalize(quat))
        pts = (verts @ R.T + shape.position) * scale
        b.add_hull(body, pts, (0, 0, 0), (1, 0, 0, 0), **kw)


def _compound(b: _Builder, scene, rec, children) -> None:
    f = Fields(rec)
    path = f.text("path", "compound")
    mode_name = (f.text("bodyMode", "dynamic") or "dynamic").lower()
    if mode_name in ("visual_only", "visualonly", "visual"):
        return
    if f.has("collidable") and not f.flag("collidable", True):
        return
    mode = _MODES.get(mode_name, DYNAMIC)
    pos, quat, scale = f.vec3("position"), f.quat("quaternion"), f.vec3("scale", (1, 1, 1))
    mass = f.num("mass", 1.0)
    if mode == DYNAMIC and not mass > 0:
        b.warn(f"{path}: a dynamic compound needs a positive mass; using 1 kg")
        mass = 1.0
    group, mask = f.group("collisionGroup", 1), f.group("collisionMask", ALL_GROUPS)
    rid = f.text("id", "") or ("compound_" + path)
    body = b.add_body(path, mode, pos, quat, mass, rec)
    count = 0
    for child in children:
        cf = Fields(child)
        owner = cf.text("compound", "")
        if owner not in (path, rid):
            continue
        prim = _PRIMS.get(cf.text("primitive", "box").lower(), cf.text("primitive", "box").lower())
        cpos = cf.vec3("position") * scale
        cquat = cf.quat("quaternion")
        cscale = cf.vec3("scale", (1, 1, 1)) * scale
        size = cf.vec3("size", (0, 0, 0))
        radius, height = cf.num("radius", 0.0), cf.num("height", 0.0)
        kw = dict(group=group, mask=mask, material=cf.text("contactMaterial", "default"))
        if prim == "box":
            dims = size * cscale if np.all(size > 0) else cscale
            b.add_primitive(body, "box", cpos, cquat, dims, **kw)
        elif prim == "sphere":
            b.add_primitive(body, "sphere", cpos, cquat, ((radius if radius > 0 else 0.5) * cscale[0],), **kw)
        elif prim in ("cylinder", "capsule"):
            dims = ((radius if radius > 0 else 0.5) * cscale[0], (height if height > 0 else 1.0) * cscale[2])
            b.add_primitive(body, prim, cpos, cquat, dims, **kw)
        elif prim == "mesh" and has_inline_mesh(child):  # a part with its own triangles (CoppeliaSim inline)
            try:
                b.add_hull(body, inline_mesh(child)[0] * cscale, cpos, cquat, **kw)
            except MeshFormatError as exc:
                b.warn(f"{exc}; part skipped")
                continue
        else:
            b.warn(f"{path}: compound child primitive {prim!r} simulated as a box from its scale")
            b.add_primitive(body, "box", cpos, cquat, cscale, **kw)
        count += 1
    if count == 0:
        b.warn(f"{path}: compound without children; using a unit box")
        b.add_primitive(body, "box", (0, 0, 0), (1, 0, 0, 0), scale, group=group, mask=mask)
    bd = b.bodies[body]
    if f.has("centerOfMass"):
        bd["com"] = f.vec3("centerOfMass")
    inertia = f.vec3("inertiaDiagonal", (0, 0, 0))
    if np.all(inertia > 0):
        bd["inertia"] = np.diag(inertia)


def _find_body(b: _Builder, scene, ref: str):
    rec = scene.find(ref) if ref else None
    if rec is None:
        return None
    return b.record_body.get(id(rec))


def _wire(b: _Builder, scene, rec):
    f = Fields(rec)
    path = f.text("path", "wire")
    if not f.flag("enabled", True):
        return None
    kind = _WIRE_KINDS.get(f.text("kind", "stiff").lower())
    if kind is None:
        b.warn(f"{path}: unknown wire kind {f.text('kind', '')!r}; skipped")
        return None
    ia, ib = _find_body(b, scene, f.text("bodyA", "")), _find_body(b, scene, f.text("bodyB", ""))
    if ia is None or ib is None:
        missing = f.text('bodyA' if ia is None else 'bodyB', '')
        b.warn(f"{path}: wire body {missing!r} has no physics body; skipped")
        return None
    length = f.num("length", 1.0)
    if length < 0:
        b.warn(f"{path}: negative wire length; skipped")
        return None
    return WireSpec(path, kind, ia, ib, f.vec3("localPositionA"), f.vec3("localPositionB"), length,
                    f.num("stiffness", 1000.0), f.num("damping", 0.0), f.num("compliance", 0.0))


def _pose(f: Fields):
    return f.vec3("position"), quat_normalize(f.quat("quaternion")), f.vec3("scale", (1, 1, 1))


def _granular(b: _Builder, rec):
    f = Fields(rec)
    path = f.text("path", "granular")
    pos, quat, scale = _pose(f)
    if f.num("radius", 0.01) <= 0:
        b.warn(f"{path}: particle radius must be positive; skipped")
        return None
    layout = granular_particles(rec, b.seed)
    for warning in layout.warnings:
        b.warn(warning)
    local = layout.positions
    world = quat_rotate(np.broadcast_to(quat, (len(local), 4)), local * scale) + pos
    model = f.text("normalContactModel", "hertz").lower()
    return GranularSpec(
        name=path, positions=world, radii=layout.radii, velocity=f.vec3("velocity"),
        density=f.num("density", 1600.0), normal_stiffness=f.num("normalStiffness", 1e6),
        normal_damping=f.num("normalDamping", 200.0), tangential_stiffness=f.num("tangentialStiffness", 1e5),
        tangential_damping=f.num("tangentialDamping", 20.0), friction=f.num("friction", 0.6),
        rolling_friction=f.num("rollingFriction", 0.05), cohesion_stiffness=f.num("cohesionStiffness", 0.0),
        cohesion_distance=f.num("cohesionMaxDistance", 0.0), hertz=(model == "hertz"),
        substeps=max(1, f.int("substeps", 2)), fixed=f.flag("fixed", False))


def cloth_topology(faces: np.ndarray, verts: np.ndarray):
    """Distance constraints (edges) and bending constraints (opposite vertices of adjacent triangles)."""
    edge_tri: dict[tuple[int, int], list[int]] = {}
    for t, (a, b_, c) in enumerate(faces.tolist()):
        for u, v, w in ((a, b_, c), (b_, c, a), (c, a, b_)):
            edge_tri.setdefault((min(u, v), max(u, v)), []).append(w)
    edges = np.array(list(edge_tri), dtype=np.int64).reshape(-1, 2)
    bends = [(ws[0], ws[1]) for ws in edge_tri.values() if len(ws) == 2]
    bends = np.array(bends, dtype=np.int64).reshape(-1, 2)
    rest = np.linalg.norm(verts[edges[:, 0]] - verts[edges[:, 1]], axis=1)
    bend_rest = np.linalg.norm(verts[bends[:, 0]] - verts[bends[:, 1]], axis=1) if len(bends) else np.zeros(0)
    return edges, rest, bends, bend_rest


def _deformable(b: _Builder, scene, rec):
    f = Fields(rec)
    path = f.text("path", "deformable")
    kind = f.text("kind", "cloth").lower()
    if kind not in ("cloth", "mass_spring"):
        b.warn(f"{path}: deformable kind {kind!r} is not simulated (cloth and mass_spring are)")
        return None
    pos, quat, scale = _pose(f)
    cloth = cloth_mesh(rec, scene.resolve)
    for warning in cloth.warnings:
        b.warn(warning)
    verts, faces = cloth.vertices * scale, cloth.faces
    world = quat_rotate(np.broadcast_to(quat, (len(verts), 4)), verts) + pos
    edges, rest, bends, bend_rest = cloth_topology(faces, world)
    total = f.num("totalMass", 0.2)
    inv_mass = np.full(len(world), len(world) / max(total, 1e-9))
    inv_mass[cloth.pinned] = 0.0

    def compliance(c_name, k_name, k_default):
        c = f.num(c_name, 0.0)
        if c > 0:
            return c
        k = f.num(k_name, k_default)
        return 1.0 / k if k > 0 else 0.0

    return ClothSpec(
        name=path, vertices=world, faces=faces, inv_mass=inv_mass, edges=edges, rest=rest, bends=bends,
        bend_rest=bend_rest,
        distance_compliance=compliance("distanceCompliance", "distanceStiffness", 1000.0),
        bend_compliance=compliance("bendCompliance", "bendStiffness", 100.0), damping=f.num("damping", 0.01),
        radius=max(f.num("collisionRadius", 0.01), 1e-4), iterations=max(1, f.int("iterations", 20)),
        substeps=max(1, f.int("substeps", 1)), group=f.group("collisionGroup", 1),
        mask=f.group("collisionMask", ALL_GROUPS) if f.flag("collidable", True) else 0)
