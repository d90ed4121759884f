"""Point cloud, CSV and NPY writers, checked with independent minimal parsers (struct, csv)."""

from __future__ import annotations

import csv
import math
import os
import struct
from pathlib import Path

import numpy as np
import pytest

from rscene_addon.base.atomic import atomic_open, write_text_atomic
from rscene_addon.sensors.writers import (
    IMU_CSV_HEADER,
    POINT_DTYPE,
    make_points,
    read_pcd,
    read_ply,
    write_imu_csv,
    write_npy,
    write_pcd,
    write_ply,
)

# struct codes, written out from the PLY and PCD specifications.
PLY_STRUCT = {"char": "b", "uchar": "B", "short": "h", "ushort": "H", "int": "i", "uint": "I",
              "float": "f", "double": "d"}
PCD_STRUCT = {("F", "4"): "f", ("F", "8"): "d", ("U", "1"): "B", ("U", "2"): "H", ("U", "4"): "I",
              ("I", "1"): "b", ("I", "2"): "h", ("I", "4"): "i"}


def split_header(blob, last_keyword):
    lines, pos = [], 0
    while True:
        end = blob.index(b"\n", pos)
        line = blob[pos:end].decode("ascii")
        lines.append(line)
        pos = end + 1
        if line.split()[0] == last_keyword:
            return lines, blob[pos:]


def parse_ply(path):
    """-> (names, list of tuples, comments)."""
    blob = Path(path).read_bytes()
    lines, body = split_header(blob, "end_header")
    assert lines[0] == "ply" and lines[1] == "format binary_little_endian 1.0"
    names, codes, count, comments = [], "", None, []
    for line in lines[2:-1]:
        words = line.split()
        if words[0] == "comment":
            comments.append(line[len("comment "):])
        elif words[0] == "element":
            assert words[1] == "vertex"
            count = int(words[2])
        elif words[0] == "property":
            codes += PLY_STRUCT[words[1]]
            names.append(words[2])
    fmt = "<" + codes
    assert len(body) == count * struct.calcsize(fmt), "payload size must match the header exactly"
    return names, list(struct.iter_unpack(fmt, body)), comments


def parse_pcd(path):
    """-> (header dict, names, list of tuples)."""
    blob = Path(path).read_bytes()
    lines, body = split_header(blob, "DATA")
    header = {}
    for line in lines:
        if not line.startswith("#"):
            key, *values = line.split()
            header[key] = values
    assert header["VERSION"] == ["0.7"] and header["DATA"] == ["binary"]
    fmt = "<" + "".join(PCD_STRUCT[(t, s)] for t, s in zip(header["TYPE"], header["SIZE"]))
    count = int(header["POINTS"][0])
    assert int(header["WIDTH"][0]) * int(header["HEIGHT"][0]) == count
    assert len(body) == count * struct.calcsize(fmt)
    return header, header["FIELDS"], list(struct.iter_unpack(fmt, body))


@pytest.fixture
def points():
    rng = np.random.default_rng(0)
    n = 257
    xyz = rng.normal(size=(n, 3)) * 20
    xyz[5] = np.nan  # a miss kept in an organized cloud
    return make_points(
        xyz,
        intensity=rng.uniform(0, 1, n),
        t=1.7e9 + np.arange(n) * 1e-5,  # absolute epoch time: needs float64
        ring=np.arange(n) % 16,
        object_id=rng.integers(-1, 1000, n),
    )


def assert_rows_equal(names, rows, points):
    assert names == ["x", "y", "z", "intensity", "t", "ring", "object_id"]
    assert len(rows) == len(points)
    for row, p in zip(rows, points):
        for value, name in zip(row, names):
            expected = p[name].item()
            if isinstance(expected, float) and math.isnan(expected):
                assert math.isnan(value)
            else:
                assert value == expected, name


def test_point_dtype_layout():
    assert POINT_DTYPE.names == ("x", "y", "z", "intensity", "t", "ring", "object_id")
    expected = ["<f4", "<f4", "<f4", "<f4", "<f8", "<u2", "<i4"]
    assert [POINT_DTYPE[n].str for n in POINT_DTYPE.names] == expected
    assert POINT_DTYPE.itemsize == 4 * 4 + 8 + 2 + 4  # packed


def test_make_points_defaults():
    p = make_points(np.zeros((3, 3)))
    assert p["object_id"].tolist() == [-1, -1, -1] and p["ring"].tolist() == [0, 0, 0]
    with pytest.raises(ValueError):
        make_points(np.zeros((3, 2)))


def test_ply_round_trip(tmp_path, points):
    path = tmp_path / "lidar" / "points_00001.ply"
    write_ply(path, points, comments=["sensor /World/Lidar", "frame 1"])
    names, rows, comments = parse_ply(path)
    assert comments == ["sensor /World/Lidar", "frame 1"]
    assert_rows_equal(names, rows, points)
    back = read_ply(path)
    assert back.dtype == POINT_DTYPE
    assert back.tobytes() == points.tobytes()  # bit-identical, NaN rows included
    for name in POINT_DTYPE.names:
        np.testing.assert_array_equal(back[name], points[name])


def test_pcd_round_trip(tmp_path, points):
    path = tmp_path / "points.pcd"
    write_pcd(path, points, viewpoint=(1, 2, 3, 1, 0, 0, 0))
    header, names, rows = parse_pcd(path)
    assert header["SIZE"] == ["4", "4", "4", "4", "8", "2", "4"]
    assert header["TYPE"] == ["F", "F", "F", "F", "F", "U", "I"]
    assert header["COUNT"] == ["1"] * 7
    assert header["WIDTH"] == [str(len(points))] and header["HEIGHT"] == ["1"]
    assert [float(v) for v in header["VIEWPOINT"]] == [1, 2, 3, 1, 0, 0, 0]
    assert_rows_equal(names, rows, points)
    back = read_pcd(path)
    assert back.tobytes() == points.tobytes()
    for name in POINT_DTYPE.names:
        np.testing.assert_array_equal(back[name], points[name])


def test_pcd_organized(tmp_path):
    p = make_points(np.arange(48.0).reshape(16, 3))
    write_pcd(tmp_path / "o.pcd", p, organized_shape=(4, 4))
    header, _, rows = parse_pcd(tmp_path / "o.pcd")
    assert header["WIDTH"] == ["4"] and header["HEIGHT"] == ["4"] and len(rows) == 16
    with pytest.raises(ValueError):
        write_pcd(tmp_path / "bad.pcd", p, organized_shape=(3, 4))


def test_empty_cloud(tmp_path):
    empty = make_points(np.zeros((0, 3)))
    write_ply(tmp_path / "e.ply", empty)
    write_pcd(tmp_path / "e.pcd", empty)
    assert parse_ply(tmp_path / "e.ply")[1] == []
    assert parse_pcd(tmp_path / "e.pcd")[2] == []
    assert len(read_ply(tmp_path / "e.ply")) == 0 and len(read_pcd(tmp_path / "e.pcd")) == 0


def test_big_endian_input_is_written_little_endian(tmp_path):
    p = np.zeros(2, dtype=[("x", ">f4"), ("y", ">f8"), ("label", ">i2")])
    p["x"], p["y"], p["label"] = [1.5, -2.0], [3.25, 4.0], [7, -300]
    write_ply(tmp_path / "be.ply", p)
    names, rows, _ = parse_ply(tmp_path / "be.ply")
    assert names == ["x", "y", "label"] and rows == [(1.5, 3.25, 7), (-2.0, 4.0, -300)]


def test_unsupported_fields_rejected(tmp_path):
    with pytest.raises(ValueError):
        write_ply(tmp_path / "x.ply", np.zeros(3))  # not structured
    with pytest.raises(ValueError):
        write_pcd(tmp_path / "x.pcd", np.zeros(2, dtype=[("v", "<f4", (3,))]))


def test_imu_csv(tmp_path):
    t = np.array([0.0, 0.005, 0.01])
    f = np.array([[0.1, -0.2, 9.81], [1 / 3, 2e-17, 9.80665], [0, 0, 9.81]])
    w = np.array([[0, 0, 0], [0.001, -0.002, 3.14159], [1e-300, 5, -6]])
    path = tmp_path / "imu" / "imu.csv"
    write_imu_csv(path, t, f, w)
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["time [s]", "accel_x [m s^-2]", "accel_y [m s^-2]", "accel_z [m s^-2]",
                       "gyro_x [rad s^-1]", "gyro_y [rad s^-1]", "gyro_z [rad s^-1]"]
    assert ",".join(rows[0]) == IMU_CSV_HEADER
    values = np.array(rows[1:], dtype=np.float64)
    np.testing.assert_array_equal(values, np.c_[t, f, w])  # bit-exact round trip
    with pytest.raises(ValueError):
        write_imu_csv(path, t, f[:, :2], w)


def test_npy_keeps_exact_path(tmp_path):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    write_npy(tmp_path / "depth_00001", a)  # no .npy suffix added
    assert os.listdir(tmp_path) == ["depth_00001"]
    b = np.load(tmp_path / "depth_00001")
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(b, a)
    write_npy(tmp_path / "x.npy", a)
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), a)


def test_atomic_write_failure_keeps_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "manifest.json"
    write_text_atomic(target, "old\n")
    with pytest.raises(RuntimeError):
        with atomic_open(target, "w") as f:
            f.write("partial")
            raise RuntimeError("crash while writing")
    assert target.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["manifest.json"]
    write_text_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["manifest.json"]
    with pytest.raises(ValueError):
        with atomic_open(target, "a"):
            pass
