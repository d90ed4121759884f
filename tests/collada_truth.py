"""Triangles a COLLADA file draws, counted straight from its XML (ElementTree, not pycollada): the truth the
COLLADA reader's tests (plain and in Blender) compare against."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

NS = "{http://www.collada.org/2005/11/COLLADASchema}"


def count_triangles(path: Path | str) -> int:
    """``<triangles count>``, ``<polylist>`` vcount - 2 per polygon and ``<polygons>`` ``<p>`` corners - 2,
    summed over the geometries each ``<instance_geometry>`` of the file instantiates."""
    root = ET.parse(path).getroot()
    per_geometry = {}
    for geom in root.iter(f"{NS}geometry"):
        total = 0
        for tri in geom.iter(f"{NS}triangles"):
            total += int(tri.get("count"))
        for poly in geom.iter(f"{NS}polylist"):
            total += sum(int(v) - 2 for v in poly.find(f"{NS}vcount").text.split())
        for poly in geom.iter(f"{NS}polygons"):
            stride = 1 + max(int(i.get("offset", 0)) for i in poly.findall(f"{NS}input"))
            total += sum(len(p.text.split()) // stride - 2 for p in poly.findall(f"{NS}p"))
        per_geometry[geom.get("id")] = total
    instances = [i.get("url").lstrip("#") for i in root.iter(f"{NS}instance_geometry")]
    return sum(per_geometry[g] for g in instances)
