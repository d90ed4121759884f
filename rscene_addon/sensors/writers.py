"""Sensor data writers: point clouds (PLY, PCD), IMU CSV and ``.npy``; every write is atomic (not fsynced:
per-frame data, see ``base.atomic``).

Point clouds are numpy structured arrays ``(N,)``; :data:`POINT_DTYPE` is the lidar layout:

============  =========  =======================================================
field         dtype      meaning
============  =========  =======================================================
``x y z``     float32    position (m) in the frame the caller chose
``intensity`` float32    return intensity (unitless, >= 0)
``t``         float64    firing time (s); float64 keeps microseconds at any epoch
``ring``      uint16     laser channel, 0 = lowest elevation
``object_id`` int32      id of the object hit, -1 for none
============  =========  =======================================================

Both formats are written binary little-endian, packed, one record per point. The ``read_*``
helpers read back exactly what these writers produce (binary little-endian only).
"""

from __future__ import annotations

import numpy as np

from ..base.atomic import atomic_open, write_bytes_atomic

__all__ = [
    "IMU_CSV_HEADER",
    "POINT_DTYPE",
    "make_points",
    "read_pcd",
    "read_ply",
    "write_imu_csv",
    "write_npy",
    "write_pcd",
    "write_ply",
]

POINT_DTYPE = np.dtype(
    [
        ("x", "<f4"),
        ("y", "<f4"),
        ("z", "<f4"),
        ("intensity", "<f4"),
        ("t", "<f8"),
        ("ring", "<u2"),
        ("object_id", "<i4"),
    ]
)

IMU_CSV_HEADER = (
    "time [s],accel_x [m s^-2],accel_y [m s^-2],accel_z [m s^-2],"
    "gyro_x [rad s^-1],gyro_y [rad s^-1],gyro_z [rad s^-1]"
)

# numpy kind+size -> PLY type name / PCD (TYPE, SIZE).
_PLY_TYPES = {
    "i1": "char", "u1": "uchar", "i2": "short", "u2": "ushort",
    "i4": "int", "u4": "uint", "f4": "float", "f8": "double",
}
_PLY_FROM_NAME = {name: np.dtype("<" + code) for code, name in _PLY_TYPES.items()}
# The sized aliases of the PLY spec (int8 ... float64) name the same types.
_PLY_FROM_NAME.update({np.dtype(dt).name: np.dtype(dt) for dt in _PLY_FROM_NAME.values()})
_PCD_TYPE = {"f": "F", "u": "U", "i": "I"}


def make_points(xyz, intensity=None, t=None, ring=None, object_id=None) -> np.ndarray:
    """A :data:`POINT_DTYPE` array ``(N,)`` from ``xyz`` ``(N, 3)`` (m) and optional ``(N,)``
    columns; missing ones default to 0 (``intensity``, ``t``, ``ring``) and -1 (``object_id``)."""
    xyz = np.asarray(xyz)
    if xyz.ndim != 2 or xyz.shape[1] != 3:
        raise ValueError(f"xyz must have shape (N, 3), got {xyz.shape}")
    points = np.zeros(len(xyz), dtype=POINT_DTYPE)
    points["x"], points["y"], points["z"] = xyz[:, 0], xyz[:, 1], xyz[:, 2]
    points["object_id"] = -1
    for name, column in (("intensity", intensity), ("t", t), ("ring", ring), ("object_id", object_id)):
        if column is not None:
            points[name] = column
    return points


def _packed_little_endian(points) -> np.ndarray:
    """Copy of a structured ``(N,)`` array with packed little-endian scalar fields."""
    points = np.asarray(points)
    if points.dtype.names is None or points.ndim != 1:
        raise ValueError("points must be a 1-D structured array (see make_points)")
    fields = []
    for name in points.dtype.names:
        dt = points.dtype[name]
        if dt.shape or dt.kind not in "iuf" or f"{dt.kind}{dt.itemsize}" not in _PLY_TYPES:
            raise ValueError(f"field {name!r} has unsupported dtype {dt}")
        fields.append((name, dt.newbyteorder("<")))
    out = np.empty(len(points), dtype=np.dtype(fields))
    for name in points.dtype.names:
        out[name] = points[name]
    return out


def write_ply(path, points, comments=()) -> None:
    """Binary little-endian PLY with one ``vertex`` element carrying every field of ``points``."""
    data = _packed_little_endian(points)
    lines = ["ply", "format binary_little_endian 1.0"]
    lines += [f"comment {c}" for c in comments]
    lines.append(f"element vertex {len(data)}")
    for name in data.dtype.names:
        dt = data.dtype[name]
        lines.append(f"property {_PLY_TYPES[f'{dt.kind}{dt.itemsize}']} {name}")
    lines.append("end_header")
    write_bytes_atomic(path, ("\n".join(lines) + "\n").encode("ascii") + data.tobytes(), durable=False)


def write_pcd(path, points, viewpoint=(0, 0, 0, 1, 0, 0, 0), organized_shape=None) -> None:
    """Binary PCD v0.7 with every field of ``points``.

    ``viewpoint`` is the acquisition pose ``tx ty tz qw qx qy qz`` (PCD's own order, w first).
    ``organized_shape=(height, width)`` marks an organized cloud (e.g. ``(channels, samples)``
    with points in row-major order); by default the cloud is unorganized (``HEIGHT 1``).
    """
    data = _packed_little_endian(points)
    height, width = organized_shape if organized_shape is not None else (1, len(data))
    if height * width != len(data):
        raise ValueError(f"organized_shape {organized_shape} does not hold {len(data)} points")
    dts = [data.dtype[n] for n in data.dtype.names]
    header = [
        "# .PCD v0.7 - Point Cloud Data file format",
        "VERSION 0.7",
        "FIELDS " + " ".join(data.dtype.names),
        "SIZE " + " ".join(str(dt.itemsize) for dt in dts),
        "TYPE " + " ".join(_PCD_TYPE[dt.kind] for dt in dts),
        "COUNT " + " ".join("1" for _ in dts),
        f"WIDTH {width}",
        f"HEIGHT {height}",
        "VIEWPOINT " + " ".join(repr(float(v)) for v in viewpoint),
        f"POINTS {len(data)}",
        "DATA binary",
    ]
    write_bytes_atomic(path, ("\n".join(header) + "\n").encode("ascii") + data.tobytes(), durable=False)


def _split_header(blob: bytes, end_marker: bytes) -> tuple[list[str], bytes]:
    """Header lines up to and including the line starting with ``end_marker``, and the payload."""
    pos = 0
    lines = []
    while True:
        nl = blob.find(b"\n", pos)
        if nl < 0:
            raise ValueError(f"header has no {end_marker.decode()!r} line")
        line = blob[pos:nl].decode("ascii").strip()
        lines.append(line)
        pos = nl + 1
        if line.startswith(end_marker.decode()):
            return lines, blob[pos:]


def read_ply(path) -> np.ndarray:
    """Structured ``(N,)`` array from a binary little-endian PLY with one ``vertex`` element."""
    with open(path, "rb") as f:
        lines, payload = _split_header(f.read(), b"end_header")
    if lines[0] != "ply" or "format binary_little_endian 1.0" not in lines:
        raise ValueError("only binary little-endian PLY is supported")
    count, fields = None, []
    for line in lines:
        words = line.split()
        if words[0] == "element":
            if words[1] != "vertex" or count is not None:
                raise ValueError("only a single 'vertex' element is supported")
            count = int(words[2])
        elif words[0] == "property":
            if words[1] == "list":
                raise ValueError("list properties are not supported")
            fields.append((words[2], _PLY_FROM_NAME[words[1]]))
    return np.frombuffer(payload, dtype=np.dtype(fields), count=count).copy()


def read_pcd(path) -> np.ndarray:
    """Structured ``(N,)`` array from a ``DATA binary`` PCD file (``COUNT`` 1 per field)."""
    with open(path, "rb") as f:
        lines, payload = _split_header(f.read(), b"DATA")
    header = {line.split()[0]: line.split()[1:] for line in lines if line and not line.startswith("#")}
    if header["DATA"] != ["binary"]:
        raise ValueError(f"only 'DATA binary' PCD is supported, got {header['DATA']}")
    if any(c != "1" for c in header["COUNT"]):
        raise ValueError("only COUNT 1 fields are supported")
    kinds = {"F": "f", "U": "u", "I": "i"}
    fields = [
        (name, np.dtype(f"<{kinds[typ]}{size}"))
        for name, size, typ in zip(header["FIELDS"], header["SIZE"], header["TYPE"])
    ]
    return np.frombuffer(payload, dtype=np.dtype(fields), count=int(header["POINTS"][0])).copy()


def write_imu_csv(path, time, specific_force, angular_velocity) -> None:
    """CSV with :data:`IMU_CSV_HEADER`: ``time (M,)`` (s), ``specific_force (M, 3)`` (m/s^2, what
    an accelerometer reads) and ``angular_velocity (M, 3)`` (rad/s). Values are written with
    Python's shortest round-trip float repr, so reading back gives the same float64 bits."""
    table = np.column_stack([np.asarray(time, dtype=np.float64), specific_force, angular_velocity])
    if table.ndim != 2 or table.shape[1] != 7:
        raise ValueError(f"need time (M,), specific_force (M, 3), angular_velocity (M, 3); got {table.shape}")
    with atomic_open(path, "w", durable=False) as f:
        f.write(IMU_CSV_HEADER + "\n")
        for row in table.tolist():
            f.write(",".join(map(repr, row)) + "\n")


def write_npy(path, array) -> None:
    """``numpy.save`` format (no pickles) at exactly ``path`` (numpy would append ``.npy`` to a path
    without it; writing through a file object avoids that)."""
    with atomic_open(path, "wb", durable=False) as f:
        np.save(f, np.asarray(array), allow_pickle=False)
