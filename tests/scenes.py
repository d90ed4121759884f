"""Small ``.rscene`` texts for tests, benchmarks and examples (pure functions, one line per record).

    lines = header(dt=0.002) + [ground(), obj("/World/Box", "box", pos=(0, 0, 0.5))]
    scene = scene_from(lines)
"""
from __future__ import annotations

ALL = 2 ** 64 - 1


def _num(v) -> str:
    return repr(float(v))


def header(dt=0.0025, gravity=(0.0, 0.0, -9.81), solver="", sleeping=True, friction=0.8, restitution=0.0,
           rest_threshold=0.001, static_friction=None, static_threshold=0.001, iterations=80) -> list[str]:
    """Header, time step, gravity and a solver record with the default material."""
    static_friction = friction if static_friction is None else static_friction
    return [
        "raisim_engine_scene 2",
        f"time_step {_num(dt)}",
        "gravity " + " ".join(_num(g) for g in gravity),
        (f"solver {int(iterations)} 1e-07 0.2 accurate defaultFriction={_num(friction)} "
         f"defaultRestitution={_num(restitution)} defaultRestitutionThreshold={_num(rest_threshold)} "
         f"defaultStaticFriction={_num(static_friction)} "
         f"defaultStaticFrictionVelocityThreshold={_num(static_threshold)} "
         f"sleepingEnabled={'true' if sleeping else 'false'} {solver}").rstrip(),
    ]


def obj(path, prim, pos=(0, 0, 0), quat=(1, 0, 0, 0), scale=(1, 1, 1), radius=0.5, height=1.0, mass=1.0,
        mode="dynamic", group=1, mask=ALL, cmat="default", mesh="-", keys="") -> str:
    """An ``object`` record in the current 25-field layout."""
    nums = " ".join(_num(v) for v in (*pos, *quat, *scale, radius, height, mass))
    return (f"object {path} {prim} {nums} {cmat} - false true false {mesh} {mode} true "
            f"{int(group)} {int(mask)} "
            f"{keys}").rstrip()


def ground(z=0.0, mask=ALL, cmat="default", path="/World/Ground") -> str:
    return obj(path, "ground", pos=(0, 0, z), scale=(20, 20, 1), mode="static", mask=mask, cmat=cmat)


def scene_from(lines):
    """Parse lines into a Scene (checked like a file)."""
    from rscene_addon.formats import rscene
    return rscene.loads("\n".join(lines) + "\n")
