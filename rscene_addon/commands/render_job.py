"""Command line for sensor rendering (bpy is imported only when a render runs).

``blender --background --python-exit-code 1 --python scripts/render_rscene.py -- SCENE --frames 1-48
--out DIR [--samples N] [--sensors A,B ...] [--chunk K/N]``, or ``python -m rscene_addon render ...``
with the bpy module. ``SCENE`` is a ``.blend`` (opened as is) or a scene file (imported into an
empty file). ``--chunk K/N`` renders the K-th of N contiguous, near-equal slices of the frames: data
files never collide between chunks (frame numbers are in their names) and together equal a full run;
each chunk writes ``manifest_chunkK-of-N.json`` (``outputs.merge_manifests`` joins them into the full
run's ``manifest.json`` content).
"""
from __future__ import annotations

import argparse
import os
import sys

from ..products.annotations import requested, with_needed_products
from ..products.plan import RenderOptions, parse_products, parse_resolution
from ..products.request import RenderError, RenderRequest

__all__ = ["add_arguments", "console", "main", "run_render_cli"]


def _products_arg(text: str):
    try:
        return parse_products(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _resolution_arg(text: str):
    try:
        return parse_resolution(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("scene", metavar="SCENE", help=".blend, or a scene file to import (.rscene, ...)")
    parser.add_argument("--frames", default=None, metavar="A-B[:STEP]",
                        help="inclusive frame range, e.g. 1-48 (default: the scene's range)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    parser.add_argument("--samples", type=int, default=None,
                        help="cap on Cycles samples (default: from the rayrai_render preset)")
    parser.add_argument("--sensors", nargs="+", default=None, metavar="NAME",
                        help="record paths/ids or Blender camera names (comma lists allowed); "
                             "default: every enabled camera and sensor record")
    parser.add_argument("--chunk", default=None, metavar="K/N", help="render only the K-th of N frame chunks")
    parser.add_argument("--range", action="store_true", dest="range_image",
                        help="also write Euclidean range images next to depth")
    parser.add_argument("--keep-exr", action="store_true", help="keep Cycles' multilayer EXR per frame")
    parser.add_argument("--rgb-bits", type=int, choices=(8, 16), default=8)
    parser.add_argument("--device", choices=("CPU", "GPU"), default="CPU")
    parser.add_argument("--denoise", action="store_true", help="denoise RGB (off by default)")
    parser.add_argument("--soft-ids", action="store_true",
                        help="take depth, ids and normals from Cycles' first (jittered) sample instead of ray "
                             "casts through pixel centres (a few edge pixels then take a neighbour's id)")
    parser.add_argument("--cryptomatte", type=int, nargs="?", const=6, default=0, metavar="LEVELS",
                        help="also write anti-aliased per-instance coverage (Cycles' Cryptomatte, LEVELS "
                             "ranks per pixel, 2..16, default 6; renders with a 1 px box filter)")
    parser.add_argument("--products", default=None, metavar="LIST", type=_products_arg,
                        help="what to make, comma list: rgb, depth, ids (segmentation), normal, flow (forward "
                             "and backward optical flow), object_coords (and NOCS), amodal (masks and "
                             "visibility), cryptomatte, lidar, imu; coco and bop write COCO / BOP annotations "
                             "after the frames (adding what they read). Default: each sensor's own. Without "
                             "rgb no Cycles render runs (annotation only)")
    parser.add_argument("--annotate-static", action="store_true",
                        help="COCO/BOP: annotate static background (ground, terrain, static bodies) as objects "
                             "too (default: it is background)")
    parser.add_argument("--resolution", default=None, metavar="WxH", type=_resolution_arg,
                        help="render every image sensor at WxH pixels, K scaled with the pixel grid (fx, cx by "
                             "W/width; fy, cy by H/height)")
    parser.add_argument("--scale", type=float, default=None, metavar="PCT",
                        help="render every image sensor at PCT %% of its size (Blender's resolution %%; "
                             "default: records 100, Blender cameras the scene's own)")
    parser.add_argument("--previews", action=argparse.BooleanOptionalAction, default=False,
                        help="colourised PNGs beside depth, ids, normals and flow ({layer}_preview_{frame}.png)")
    parser.add_argument("--static", action="store_true",
                        help="render the scene as it stands: no simulation of its dynamic bodies first")
    parser.add_argument("--substeps", type=int, default=None,
                        help="physics steps per frame of the simulation before rendering (default: time_step)")
    parser.add_argument("--backend", choices=("auto", "numba", "numpy"), default=None,
                        help="physics core of that simulation (default auto; env RSCENE_SIM_BACKEND)")
    parser.add_argument("--raycaster", choices=("auto", "embree", "bvh"), default="auto",
                        help="lidar ray casting: Embree (the bundled embreex wheel), Blender's BVHTree, or "
                             "auto (Embree where it imports)")
    return parser


_REGISTERED_HERE = []


def _ensure_registered() -> None:
    import bpy
    if not hasattr(bpy.types.Object, "rscene"):
        from .. import registration
        registration.register()
        _REGISTERED_HERE.append(registration)


def _unregister_if_ours() -> None:
    """Undo a registration made by this module (the bpy 4.5 module hangs at exit when classes stay
    registered)."""
    while _REGISTERED_HERE:
        _REGISTERED_HERE.pop().unregister()


def console(print_fn=print):
    """``(report, progress)`` for :func:`rscene_addon.render.run` that print lines: warnings as
    ``warning: ...``, progress as ``[ 42%] frame 3: /World/Cam`` when the percentage changes."""
    def report(level, message):
        print_fn(message if level == "INFO" else f"{level.lower()}: {message}")
    last = [-1]

    def progress(fraction, message):
        percent = int(100 * fraction)
        if message and (percent != last[0] or fraction >= 1.0):
            last[0] = percent
            print_fn(f"[{percent:3d}%] {message}")
    return report, progress


def run_render_cli(scene_path, frames_spec, out_dir, samples=None, sensors=None, chunk=None, print_fn=print,
                   options: RenderOptions | None = None, unregister_after: bool = True, *, simulate: bool = True,
                   substeps: int | None = None, backend: str | None = None) -> int:
    """The ``render`` command around :func:`rscene_addon.render.run`: prints progress, the sensors and
    a summary; returns 0, 1 (a :class:`RenderError`, printed) or 130 (interrupted). Registers the
    add-on's classes if they are not (and unregisters them afterwards when ``unregister_after``).
    ``simulate``, ``substeps``, ``backend``: see :class:`RenderRequest`."""
    report, progress = console(print_fn)
    try:
        request = RenderRequest(scene_path, out_dir, frames_spec, samples, sensors, chunk,
                                options or RenderOptions(), simulate=simulate, substeps=substeps,
                                backend=backend)
        _ensure_registered()
        from ..render import run
        result = run(request, progress, report=report)
        if result.manifest is None:  # stopped before any frame (during the simulation)
            print_fn("cancelled")
            return 130
        renders = result.timings["camera_render_s"]
        per = f", {sum(renders) / len(renders):.3f} s per camera render" if renders else ""
        print_fn(f"wrote {len(result.files)} files and {os.path.relpath(result.manifest)} in "
                 f"{result.seconds:.2f} s{per}")
        wanted = requested(request.options.products)
        if wanted and request.chunk is not None and not result.cancelled:
            print_fn(f"{', '.join(wanted)}: written once all chunks are done, by `python -m rscene_addon "
                     f"export-annotations {result.out_dir} --{' --'.join(wanted)}`")
        return 0
    except RenderError as exc:
        print_fn(f"error: {exc}")
        return 1
    except ImportError as exc:
        if exc.name not in ("bpy", "mathutils", "bpy_extras"):
            raise
        print_fn("error: rendering needs Blender: run inside `blender --background --python ...` or with "
                 "the bpy module installed")
        return 1
    except KeyboardInterrupt:
        print_fn("cancelled")
        return 130
    finally:
        if unregister_after:
            _unregister_if_ours()


def options_from_args(args) -> RenderOptions:
    return RenderOptions(rgb_bit_depth=args.rgb_bits, denoise=args.denoise, device=args.device,
                         exact_ids=not args.soft_ids, range_image=args.range_image, keep_exr=args.keep_exr,
                         raycaster=args.raycaster, cryptomatte=args.cryptomatte,
                         annotate_static=args.annotate_static, resolution=args.resolution, scale=args.scale,
                         previews=args.previews, products=with_needed_products(args.products))


def simulation_from_args(args) -> dict:
    """``run_render_cli``'s simulation keywords from parsed arguments."""
    return {"simulate": not args.static, "substeps": args.substeps, "backend": args.backend}


def main(argv=None) -> int:
    """``argv`` defaults to what follows ``--`` in ``sys.argv`` (inside Blender), else ``sys.argv[1:]``."""
    if argv is None:
        argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    parser = add_arguments(argparse.ArgumentParser(
        prog="render_rscene", description="Render camera, lidar and IMU sensors of a scene over frames."))
    args = parser.parse_args(argv)
    return run_render_cli(args.scene, args.frames, args.out, samples=args.samples, sensors=args.sensors,
                          chunk=args.chunk, options=options_from_args(args),
                          print_fn=lambda line: print(line, flush=True), **simulation_from_args(args))
