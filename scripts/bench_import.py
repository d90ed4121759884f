"""Benchmark: .rscene import of generated scenes with 1k and 10k objects (run with a bpy interpreter).

    .venv/bpy52/bin/python scripts/bench_import.py

Reports the import time as a ratio to a bare loop that creates the same objects with ``bpy.data``
(one shared cube mesh carrying the crates' material, objects.new + link + location/rotation/scale; also
without the material, as a second reference), measured in the same run, and the
10k/1k ratio (near 10 means linear; watch for quadratic name lookups). Targets: <= 1.5x and <= 11.
Each time is the best of ``--repeat`` runs (default 5; bare loop and import alternate), since a shared
machine adds noise only upwards.
"""
from __future__ import annotations

import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import bpy  # noqa: E402

import rscene_addon  # noqa: E402
from rscene_addon.blender.scene_import import import_scene_file  # noqa: E402


def generate(path: str, count: int) -> None:
    rng = random.Random(count)
    with open(path, "w") as handle:
        handle.write("raisim_engine_scene 2\nmaterial crate 0.8 0.5 0.2 1 0 0.6 id=crate\n")
        for i in range(count):
            x, y, z = (rng.uniform(-50, 50) for _ in range(3))
            handle.write(f"object /World/Crate_{i} box {x:.5g} {y:.5g} {z:.5g} 1 0 0 0 0.5 0.5 0.5 0.5 1 2 "
                         f"default crate false true false - dynamic true 1 18446744073709551615\n")


def bare_loop(count: int, material: bool = True) -> float:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    rng = random.Random(count)
    start = time.perf_counter()
    mesh = bpy.data.meshes.new("cube")
    if material:  # the file gives every crate a material; the natural way with a shared mesh
        mesh.materials.append(bpy.data.materials.new("crate"))
    collection = bpy.data.collections.new("bare")
    bpy.context.scene.collection.children.link(collection)
    for i in range(count):
        ob = bpy.data.objects.new(f"Crate_{i}", mesh)
        ob.location = tuple(rng.uniform(-50, 50) for _ in range(3))
        ob.rotation_mode = "QUATERNION"
        ob.rotation_quaternion = (1, 0, 0, 0)
        ob.scale = (0.5, 0.5, 0.5)
        collection.objects.link(ob)
    return time.perf_counter() - start


def ours(path: str) -> float:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    start = time.perf_counter()
    import_scene_file(path, bpy.context.scene)
    return time.perf_counter() - start


def main() -> None:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 5
    rscene_addon.register()
    folder = tempfile.mkdtemp()
    results = {}
    for count in (1000, 10000):
        path = os.path.join(folder, f"scene_{count}.rscene")
        generate(path, count)
        base = plain = mine = float("inf")
        for _ in range(repeat):
            base, plain = min(base, bare_loop(count)), min(plain, bare_loop(count, material=False))
            mine = min(mine, ours(path))
        results[count] = mine
        print(f"{count:6d} objects: bare bpy.data loop {base:.3f} s, import {mine:.3f} s, ratio {mine / base:.2f}x "
              f"(target <= 1.5x; {mine / plain:.2f}x against the loop without the material, {plain:.3f} s)")
    print(f"10k/1k import time ratio: {results[10000] / results[1000]:.2f} (target <= 11)")


if __name__ == "__main__":
    main()
    # bpy 4.5 can hang in interpreter shutdown while add-on classes are registered (see __main__.py)
    sys.stdout.flush()
    os._exit(0)
