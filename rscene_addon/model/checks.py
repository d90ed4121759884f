"""Rules beyond single values: list lengths, sizes, record order. One function per record kind.

Each rule gets (record, scene, seen) where ``seen`` maps tags to the records before this one, and returns
messages; a message starting with ``warning: `` is a warning, the rest are errors.

The rules are those of the newer format document's "Rejected content" that matter to an editor. Content
that Engine 2 itself reads but RaiSim's reader refuses (a version-1 relative ``asset_root``, a hidden or
procedural terrain, a grass patch, a node parented to another node) is a warning, not an error.
"""
from __future__ import annotations

import ntpath
import posixpath

_PAINT_LISTS = ("texturePrimary", "textureSecondary", "textureBlend", "wetness", "holes")
_MAX_SAMPLES_PER_AXIS = 16384
_MAX_SAMPLES = 64 * 2**20
MAX_BOX_FILL = 5_000_000  # particles of a granular box fill (Engine 2's default cap is 20000)


def check_terrain_region(record, scene, seen) -> list[str]:
    problems = []
    xs, ys = record.get("xSamples"), record.get("ySamples")
    if xs < 2 or ys < 2:
        problems.append(f"a height map needs at least 2 samples per axis, got {xs} x {ys}")
    elif xs > _MAX_SAMPLES_PER_AXIS or ys > _MAX_SAMPLES_PER_AXIS or xs * ys > _MAX_SAMPLES:
        problems.append(f"xSamples x ySamples = {xs} x {ys} is too large "
                        f"(at most {_MAX_SAMPLES_PER_AXIS} per axis and 64 Mi in total)")
    if record.get("xSize") <= 0 or record.get("ySize") <= 0:
        problems.append("a height map needs a positive size (xSize, ySize)")
    count = xs * ys
    heights = record.get("heights")
    if len(heights) not in (0, count):
        problems.append(f"heights has {len(heights)} values, "
                        f"expected xSamples*ySamples = {xs}*{ys} = {count}")
    for name in _PAINT_LISTS + ("vertexColors",):
        if record.schema.field(name) is None or not record.has(name):
            continue
        values = record.get(name)
        if len(values) not in (0, count):
            problems.append(f"{name} has {len(values)} values, expected 0 or {count}")
    if record.get("sourceKind") != "samples":
        problems.append(f"warning: sourceKind {record.get('sourceKind')!r}: only the heights "
                        "samples are read, so the terrain may differ from Engine 2's")
    for name in ("visible", "collidable"):
        if not record.get(name):
            problems.append(f"warning: {name}=false: RaiSim's reader rejects such a terrain")
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


def _is_absolute(path: str) -> bool:
    return posixpath.isabs(path) or ntpath.isabs(path)


def check_asset_root(record, scene, seen) -> list[str]:
    root = record.get("root")
    try:
        version = scene.version
    except LookupError:
        return []
    if version == 1 and root not in ("", ".") and not _is_absolute(root):
        return [f"warning: version-1 asset_root {root!r} is neither '.' nor absolute: Engine 2 read it "
                "relative to its project, RaiSim's reader rejects it; resolved relative to the scene file"]
    return []


def _check_parent(record, scene, seen) -> list[str]:
    """``parentGroupId``: a missing parent puts the node in the world frame; a parent that is a node (not a
    folder) passes on its transform while ``scene_graph`` inherits transforms, which no reader evaluates."""
    if record.schema.field("parentGroupId") is None or record.raw_keys.get("parentGroupId", "-") in ("", "-"):
        return []  # absent or empty: the default, no parent (the common case, so checked on the raw text)
    ref = record.get("parentGroupId")
    if not ref:
        return []
    parent = scene.find(ref)
    if parent is None:
        return [f"warning: parentGroupId {ref!r} names no node: placed in the world frame"]
    if parent is record:
        return [f"warning: parentGroupId {ref!r} names the node itself: placed in the world frame"]
    if parent.tag != "group" and scene.setting("scene_graph").get("inheritedTransforms"):
        return [f"warning: parentGroupId {ref!r} is a {parent.tag}, whose transform it would inherit "
                "(not evaluated; RaiSim's reader rejects this unless inheritedTransforms=false)"]
    return []


def _cycle(record, scene) -> list[str]:
    loop = scene.parent_cycle(record)
    if not loop:
        return []
    names = " -> ".join(f"{r.path} (line {r.line})" for r in loop + [record])
    return [f"parents form a cycle: {names}"]


def check_parent(record, scene, seen) -> list[str]:
    problems = _check_parent(record, scene, seen)
    if record.raw_keys.get("parentGroupId", "-") in ("", "-"):
        return problems  # no parent: no cycle to look for (the common case, decided on the raw text)
    return problems + _cycle(record, scene)


def check_group(record, scene, seen) -> list[str]:
    """``parentId``: editor state (the folder tree), ignored by the engines; a parent that does not exist
    puts the folder at the root, a cycle of parents has no root at all."""
    if record.raw_keys.get("parentId", "-") in ("", "-"):
        return []
    ref = record.get("parentId")
    if not ref:
        return []
    parent = scene.find(ref)
    if parent is None:
        return [f"warning: parentId {ref!r} names no group: shown at the root"]
    if parent is record:
        return [f"parentId {ref!r} names the group itself"]
    return _cycle(record, scene)


def check_granular(record, scene, seen) -> list[str]:
    """A box fill (no ``positions``) is counted before anything is made: a tiny spacing in a big box asks
    for billions of particles."""
    problems = check_parent(record, scene, seen)
    if len(record.get("positions")):
        return problems
    lo, hi = record.get("boxMin"), record.get("boxMax")
    spacing = max(record.get("spacing"), 2.0 * record.get("radius"))
    count = 1.0
    for a, b in zip(lo, hi):
        count *= max(1.0, (b - a) / spacing + 1.0) if spacing > 0 else 1.0
    cap = record.get("maxParticles")
    if cap > 0:
        count = min(count, cap)
    if count > MAX_BOX_FILL:
        problems.append(f"the box fill makes about {count:.3g} particles (maxParticles={cap}): more than "
                        f"{MAX_BOX_FILL}; lower maxParticles or raise spacing")
    return problems


def check_object(record, scene, seen) -> list[str]:
    problems = check_parent(record, scene, seen)
    mode = record.get("bodyMode")
    has_body = mode != "visual_only" and record.get("collidable")
    if has_body and mode == "dynamic" and record.get("primitive") != "ground" and not record.get("mass") > 0:
        problems.append(f"mass must be positive for a dynamic body, got {record.get('mass')}")
    return problems


def check_instanced_visual(record, scene, seen) -> list[str]:
    problems = check_parent(record, scene, seen)
    if not record.get("enabled"):
        return problems
    if record.get("grassPatch"):
        problems.append("warning: grassPatch=true: a grass patch is not drawn by rayrai")
    if record.get("primitive") == "ground":
        problems.append("warning: primitive 'ground' cannot be instanced")
    weights, count = len(record.get("colorWeights")), len(record.get("instances"))
    if weights > count:
        problems.append(f"warning: colorWeights has {weights} values for {count} instances")
    return problems


def check_wire(record, scene, seen) -> list[str]:
    problems = check_parent(record, scene, seen)
    if not record.get("enabled"):
        return problems
    if record.get("length") < 0:
        problems.append(f"length must not be negative, got {record.get('length')}")
    for name in ("localIndexA", "localIndexB"):
        if record.get(name) < 0:
            problems.append(f"{name} must not be negative, got {record.get(name)}")
    return problems


def check_child(record, scene, seen) -> list[str]:
    """A compound_child or articulated_ik follows the record it belongs to (Engine 2 writes it right after,
    and the older document ties an IK target to the most recent articulated record)."""
    parent_tag, field = record.schema.parent
    ref = record.get(field)
    if any(ref in (owner.path, owner.id) for owner in seen.get(parent_tag, ())):
        return []
    return [f"warning: {field} {ref!r} is not a {parent_tag} defined before this record"]


RECORD_CHECKS = {
    "asset_root": check_asset_root,
    "group": check_group,
    "terrain_region": lambda record, scene, seen: (check_terrain_region(record, scene, seen)
                                                   + check_parent(record, scene, seen)),
    "terrain_splat_layer": check_layer,
    "terrain_foliage_layer": check_layer,
    "object": check_object,
    "granular": check_granular,
    "instanced_visual": check_instanced_visual,
    "wire": check_wire,
    "compound_child": check_child,
    "articulated_ik": check_child,
}
for _tag in ("light", "camera", "compound", "deformable", "articulated", "sensor",
             "reflection_probe", "local_fog", "projected_decal", "irradiance_volume", "point_cloud"):
    RECORD_CHECKS[_tag] = check_parent
