"""Dependencies point one way. Every import between the add-on's rooms must be an allowed edge below;
any other (a cycle, an upward import, a new room nobody placed) fails here with the file and line.

    ui / ops / cli (cli.py, commands/, dataset/) / registration
      -> blender, render
        -> products (what a render makes, pure: the product table, writers, manifest, COCO/BOP)
          -> formats, sim, sensors, robots
          -> scene_geometry (what records are geometrically, for Blender and the simulator alike)
            -> model
              -> base (spatial maths, atomic writing)
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rscene_addon"
LOWER = {"base": set()}
LOWER["model"] = {"base"}
LOWER["scene_geometry"] = {"model", "base"}
LOWER["robots"] = {"model", "base"}
LOWER["sensors"] = {"model", "base", "formats"}  # annotation writers use the PNG codec
LOWER["formats"] = {"model", "base", "scene_geometry", "robots"}  # readers build Robot models from URDF/MJCF
LOWER["sim"] = {"model", "base", "scene_geometry", "robots", "formats"}
LOWER["products"] = {"model", "base", "scene_geometry", "sensors", "formats"}
PURE = {"base", "model", "scene_geometry", "robots", "sensors", "formats", "sim", "products"}
LOWER["blender"] = PURE
LOWER["render"] = PURE | {"blender"}  # render reads what blender imported; blender never imports render
LOWER["ops"] = PURE | {"blender", "render"}
LOWER["ui"] = PURE | {"blender", "render", "ops"}
LOWER["commands"] = PURE | {"blender", "render", "registration"}
LOWER["dataset"] = PURE | {"blender", "render", "commands"}  # many render jobs: orchestration too
LOWER["cli"] = PURE | {"commands", "dataset"}
LOWER["registration"] = {"blender", "ops", "ui", "render"}
LOWER["__init__"] = {"registration"}
LOWER["__main__"] = {"cli"}


def _room(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else path.stem


def _imports(path: Path):
    return _imports_in(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).parts[:-1], str(path))


def _imports_in(text: str, package_parts: tuple, name: str = "<probe>"):
    """(line, target room) of every import of another part of the package, relative or absolute."""
    tree = ast.parse(text, name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                up = node.level - 1
                base = list(package_parts[:len(package_parts) - up]) if up else list(package_parts)
                if node.level - 1 > len(package_parts):
                    continue
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    yield node.lineno, target[0]
                else:  # "from .. import x": x is the room
                    for alias in node.names:
                        yield node.lineno, alias.name
            elif node.module and node.module.split(".")[0] == "rscene_addon":
                rest = node.module.split(".")[1:]
                for name in ([rest[0]] if rest else [a.name for a in node.names]):
                    yield node.lineno, name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "rscene_addon" and len(parts) > 1:
                    yield node.lineno, parts[1]


def test_every_room_is_placed():
    rooms = {_room(p) for p in PACKAGE.rglob("*.py")}
    assert rooms <= set(LOWER), f"rooms without a place in the layering: {sorted(rooms - set(LOWER))}"


def test_imports_follow_the_allowed_edges():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        room = _room(path)
        for line, target in _imports(path):
            if target != room and target not in LOWER.get(room, set()):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {room} -> {target}")
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


def test_the_checker_sees_relative_and_absolute_imports():
    text = ("from ..sim import World\nfrom rscene_addon.blender import scene_import\nfrom . import rscene\n"
            "import rscene_addon.render.plan\nfrom .. import registration\n")
    assert [t for _, t in _imports_in(text, ("formats",))] == ["sim", "blender", "formats", "render", "registration"]
