"""The static simulation model (what does not change while stepping) and the per-step State.

Following brax, the model holds the bodies' constant properties and shapes, and the State holds what
the integrator advances. Bodies are indexed 0..N-1 and geoms (collision shapes) 0..G-1; a body's state
is the pose of its centre of mass; ``body_com`` converts to the record's frame.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import ALL_GROUPS  # noqa: F401 - one definition (model.values); sim/ imports it from here

STATIC, KINEMATIC, DYNAMIC = 0, 1, 2
MODE_NAMES = ("static", "kinematic", "dynamic")

# material table columns
FRICTION, RESTITUTION, RESTITUTION_THRESHOLD, STATIC_FRICTION, STATIC_VELOCITY = range(5)

TERRAIN_GROUP = 1 << 63


@dataclass
class SolverSettings:
    """The ``solver`` record, as used here (Engine 2 defaults).

    ``iterations`` and ``tolerance`` come from #0/#1 unless ``contactMaxIterations`` /
    ``contactThreshold`` differ from their defaults (as the RaiSim reader does). ``erp`` up to 1 is the
    fraction of a penetration removed per step (split impulse; larger values are capped at 0.8).
    ``forward_first`` is ``fixedContactSolverIterationOrder``: the first sweep direction.
    """

    iterations: int = 80
    tolerance: float = 1e-7
    erp: float = 0.2
    erp2: float = 0.0
    max_contacts_per_pair: int = 8
    sleeping_enabled: bool = True
    sleep_linear: float = 0.002
    sleep_angular: float = 0.01
    sleep_quiet_steps: int = 5
    forward_first: bool = False  # fixedContactSolverIterationOrder
    world_time: float = 0.0
    default_material: tuple = (0.8, 0.0, 0.001, 0.8, 0.001)
    contact_margin: float = 0.005  # speculative contact distance (m), plus what velocities cover in a step
    position_iterations: int = 20  # split-impulse (position correction) sweeps, at most
    # Velocity sweeps, at most (and at most ``iterations``). A moving pile never meets the tolerance (its
    # sweep changes stall near 1e-4 m/s at 80 sweeps too), so this budget alone sets its cost; the
    # touching 5-sphere cradle, the slowest truth scene to converge, stops on the tolerance after 26.
    velocity_iterations: int = 28
    # The solver stops when a sweep changes no velocity by more than max(tolerance, tolerance_floor) m/s;
    # RaiSim's thresholds (1e-7, 1e-8) measure a different solver's error, and sweeps below 1e-6 m/s
    # change positions by less than a micrometre per second.
    tolerance_floor: float = 1e-5


@dataclass
class WireSpec:
    """A ``wire``: a unilateral distance limit between points on two bodies (centre-of-mass frames)."""

    name: str
    kind: str  # stiff | compliant | custom
    body_a: int
    body_b: int
    local_a: np.ndarray
    local_b: np.ndarray
    length: float
    stiffness: float = 1000.0
    damping: float = 0.0
    compliance: float = 0.0


@dataclass
class GranularSpec:
    """A ``granular`` particle system (DEM)."""

    name: str
    positions: np.ndarray  # (P, 3) initial world positions
    radii: np.ndarray  # (P,)
    velocity: np.ndarray  # (3,) initial velocity
    density: float = 1600.0
    normal_stiffness: float = 1e6
    normal_damping: float = 200.0
    tangential_stiffness: float = 1e5
    tangential_damping: float = 20.0
    friction: float = 0.6
    rolling_friction: float = 0.05
    cohesion_stiffness: float = 0.0
    cohesion_distance: float = 0.0
    hertz: bool = True
    substeps: int = 2
    fixed: bool = False


@dataclass
class ClothSpec:
    """A cloth (``deformable`` kind cloth): XPBD particles on a triangle mesh."""

    name: str
    vertices: np.ndarray  # (V, 3) initial world positions
    faces: np.ndarray  # (T, 3)
    inv_mass: np.ndarray  # (V,), 0 for pinned vertices
    edges: np.ndarray  # (E, 2) distance constraints
    rest: np.ndarray  # (E,)
    bends: np.ndarray  # (B, 2) bending constraints (vertices opposite a shared edge)
    bend_rest: np.ndarray  # (B,)
    distance_compliance: float = 0.0
    bend_compliance: float = 0.0
    damping: float = 0.01
    radius: float = 0.01
    iterations: int = 20
    substeps: int = 1
    friction: float = 0.5
    group: int = 1
    mask: int = ALL_GROUPS


@dataclass
class Model:
    """Everything constant during a simulation. Shapes: N bodies, G geoms, K contact materials."""

    dt: float
    gravity: np.ndarray  # (3,)
    solver: SolverSettings
    body_name: list  # (N,) record paths
    body_mode: np.ndarray  # (N,) STATIC / KINEMATIC / DYNAMIC
    body_mass: np.ndarray  # (N,)
    body_inv_mass: np.ndarray  # (N,) 0 unless dynamic
    body_inertia: np.ndarray  # (N, 3, 3) about the centre of mass, body axes
    body_inv_inertia: np.ndarray  # (N, 3, 3) 0 unless dynamic
    body_com: np.ndarray  # (N, 3) centre of mass in the record's frame
    body_radius: np.ndarray  # (N,) bounding radius about the centre of mass
    geom_body: np.ndarray  # (G,)
    geom_type: np.ndarray  # (G,) geometry.SPHERE ...
    geom_pos: np.ndarray  # (G, 3) in the body's centre-of-mass frame
    geom_quat: np.ndarray  # (G, 4)
    geom_size: np.ndarray  # (G, 3) sphere (r); box (half extents); capsule/cylinder (r, half height)
    geom_poly: list  # (G,) Polytope or None
    geom_hfield: list  # (G,) HeightField or None
    geom_local_aabb: np.ndarray  # (G, 2, 3) local bounds (centre, half extent) for polytopes
    geom_radius: np.ndarray  # (G,) bounding radius about the geom origin
    geom_group: np.ndarray  # (G,) uint64
    geom_mask: np.ndarray  # (G,) uint64
    geom_material: np.ndarray  # (G,) index into material_names
    material_names: list
    material_table: np.ndarray  # (K, K, 5) friction, restitution, threshold, static friction, static velocity
    wires: list = field(default_factory=list)
    granular: list = field(default_factory=list)
    cloth: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    @property
    def num_bodies(self) -> int:
        return len(self.body_name)

    @property
    def num_geoms(self) -> int:
        return len(self.geom_body)


@dataclass
class State:
    """Per-step state. N bodies: centre-of-mass pose and velocities in world coordinates."""

    time: float
    position: np.ndarray  # (N, 3) centre of mass
    quaternion: np.ndarray  # (N, 4) w, x, y, z
    linear_velocity: np.ndarray  # (N, 3)
    angular_velocity: np.ndarray  # (N, 3) world frame
    sleeping: np.ndarray  # (N,) bool
    quiet_steps: np.ndarray  # (N,) consecutive quiet steps
    particles: list = field(default_factory=list)  # per granular system: positions (P, 3)
    particle_velocity: list = field(default_factory=list)
    particle_omega: list = field(default_factory=list)
    cloth: list = field(default_factory=list)  # per cloth: vertex positions (V, 3)
    cloth_velocity: list = field(default_factory=list)

    def copy(self) -> "State":
        return State(self.time, self.position.copy(), self.quaternion.copy(), self.linear_velocity.copy(),
                     self.angular_velocity.copy(), self.sleeping.copy(), self.quiet_steps.copy(),
                     [p.copy() for p in self.particles], [p.copy() for p in self.particle_velocity],
                     [p.copy() for p in self.particle_omega], [c.copy() for c in self.cloth],
                     [c.copy() for c in self.cloth_velocity])
