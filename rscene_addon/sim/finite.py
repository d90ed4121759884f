"""Is a trajectory usable: the first pose, velocity or point that is not a finite number (pure).

Every path that writes a trajectory somewhere (``simulate`` -> .npz, ``bake`` and ``render`` -> keyframes)
asks this first, so a solver blow-up is an error naming the body and frame, never NaN keys or files.
"""
from __future__ import annotations

__all__ = ["non_finite"]


def non_finite(traj) -> str | None:
    """The first body (record path) and frame whose pose or velocity is not finite, or None."""
    import numpy as np
    arrays = {"position": traj.position, "quaternion": traj.quaternion,
              "linear velocity": traj.linear_velocity, "angular velocity": traj.angular_velocity}
    arrays.update({f"particle positions of {path}": a for path, a in traj.particles.items()})
    arrays.update({f"cloth vertices of {path}": a for path, a in traj.cloth.items()})
    for what, array in arrays.items():
        array = np.asarray(array)
        if array.size == 0 or np.isfinite(array).all():
            continue
        frame, index = (int(v) for v in np.argwhere(~np.isfinite(array))[0][:2])
        body = str(traj.names[index]) if what in ("position", "quaternion", "linear velocity",
                                                  "angular velocity") else f"point {index}"
        t = float(traj.time[frame]) if frame < len(traj.time) else float("nan")
        return f"{body}: {what} is not a finite number from frame {frame} (t = {t:g} s) on"
    return None
