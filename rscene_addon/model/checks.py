"""Rules beyond single values: list lengths, sizes, record order. One function per record kind.

Each rule gets (record, scene, seen) where ``seen`` maps tags to the records before this one, and returns
messages; a message starting with ``warning: `` is a warning, the rest are errors.
"""
from __future__ import annotations

_PAINT_LISTS = ("texturePrimary", "textureSecondary", "textureBlend", "wetness", "holes")


def check_terrain_region(record, scene, seen) -> list[str]:
    problems = []
    xs, ys = record.get("xSamples"), record.get("ySamples")
    if xs < 2 or ys < 2:
        problems.append(f"a height map needs at least 2 samples per axis, got {xs} x {ys}")
    if record.get("xSize") <= 0 or record.get("ySize") <= 0:
        problems.append("a height map needs a positive size")
    count = xs * ys
    heights = record.get("heights")
    if len(heights) not in (0, count):
        problems.append(f"heights has {len(heights)} values, expected xSamples*ySamples = {xs}*{ys} = {count}")
    for name in _PAINT_LISTS + ("vertexColors",):
        if record.schema.field(name) is None or not record.has(name):
            continue
        values = record.get(name)
        if len(values) not in (0, count):
            problems.append(f"{name} has {len(values)} values, expected 0 or {count}")
    return problems


def _terrain_before(record, seen) -> list[str]:
    ref = record.get("terrain")
    for region in seen.get("terrain_region", ()):
        if ref in (region.path, region.id):
            count = region.get("xSamples") * region.get("ySamples")
            name = "weights" if record.tag == "terrain_splat_layer" else "density"
            if record.schema.field(name) and record.has(name) and len(record.get(name)) not in (0, count):
                return [f"{name} has {len(record.get(name))} values, expected 0 or {count}"]
            return []
    return [f"terrain {ref!r} is not defined before this layer (a terrain_region must come first)"]


def check_layer(record, scene, seen) -> list[str]:
    return _terrain_before(record, seen)


RECORD_CHECKS = {
    "terrain_region": check_terrain_region,
    "terrain_splat_layer": check_layer,
    "terrain_foliage_layer": check_layer,
}
