"""Command line: ``python -m rscene_addon <command> ...`` (also inside ``blender --background``).

Thin: parse arguments, call the layers below, print progress, turn errors into exit status 1.
Commands that need Blender (import, export, render, demo) import ``bpy`` only when they run.
"""
from __future__ import annotations

import argparse
import os
import sys

from .model import FormatError, describe

DEMO_SCENE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo.rscene")  # ships in the extension

DESCRIPTION = """\
Robotics scene files (RaiSim .rscene, RaiSim World XML, CoppeliaSim XML, Project AirSim JSONC)
for Blender: check them, convert them, simulate them, and bring them in and out of Blender.

examples:
  python -m rscene_addon validate scene.rscene
  python -m rscene_addon convert scene.rscene copy.rscene
  python -m rscene_addon simulate scene.rscene --duration 2.0 --fps 60 --out traj.npz
  python -m rscene_addon import scene.rscene --blend scene.blend      (needs the bpy module)
  python -m rscene_addon export scene.blend scene.rscene                (needs the bpy module)
  python -m rscene_addon bake scene.rscene --frames 1-250 --blend baked.blend            (needs bpy)
  python -m rscene_addon render scene.rscene --frames 1-48 --out renders [--chunk 1/4]   (needs bpy)
  python -m rscene_addon dataset job.toml --out data [--workers 2] [--ray [ADDRESS]]     (needs bpy)
  python -m rscene_addon demo --out out/demo       import + simulate + bake + render the demo scene
  python -m rscene_addon export-annotations renders --coco --bop    COCO / BOP files from a render folder
"""


def _print_diagnostics(diagnostics, stream=sys.stdout) -> None:
    for diagnostic in diagnostics:
        print(f"  {diagnostic}", file=stream)


def cmd_validate(args) -> int:
    from .formats import registry
    status = 0
    for path in args.files:
        try:
            scene = registry.read_scene(path)
        except FormatError as exc:
            print("\n".join(describe(exc, limit=None, heading=f"{path}: INVALID ({len(exc.diagnostics)} error(s))")))
            status = 1
            continue
        except OSError as exc:
            print(f"{path}: cannot read: {exc.strerror or exc}")
            status = 1
            continue
        except Exception as exc:  # noqa: BLE001 - a reader bug: name the file, go on with the others
            print(f"{path}: INVALID (the reader failed: {type(exc).__name__}: {str(exc)[:200]}; please report "
                  "this file as a bug)")
            status = 1
            continue
        counts = scene.counts()
        print(f"{path}: OK, version {scene.version}, {sum(counts.values())} records")
        for tag, count in sorted(counts.items()):
            print(f"  {tag:24s} {count}")
        if scene.warnings:
            print(f"  {len(scene.warnings)} warning(s):")
            _print_diagnostics(scene.warnings)
    return status


def cmd_convert(args) -> int:
    from .formats import registry
    warnings = registry.convert(args.input, args.output, to=args.to)
    for warning in warnings:
        print(f"warning: {warning}")
    print(f"wrote {args.output}")
    return 0


def cmd_simulate(args) -> int:
    from .commands.simulate_job import run_simulation_cli
    return run_simulation_cli(args.scene, args.duration, args.fps, args.out, substeps=args.substeps,
                              backend=args.backend)


def cmd_import(args) -> int:
    from .commands import blender_jobs as cli_jobs
    return cli_jobs.import_to_blend(args.files, args.blend)


def cmd_export(args) -> int:
    from .commands import blender_jobs as cli_jobs
    return cli_jobs.export_from_blend(args.blend, args.output)


def cmd_render(args) -> int:
    from .commands.render_job import options_from_args, run_render_cli, simulation_from_args
    return run_render_cli(args.scene, args.frames, args.out, samples=args.samples, sensors=args.sensors,
                          chunk=args.chunk, options=options_from_args(args),
                          print_fn=lambda line: print(line, flush=True), **simulation_from_args(args))


def cmd_export_annotations(args) -> int:
    from .commands.annotations_job import export_folder
    return export_folder(args.out_dir, args.coco, args.bop, args.sensors, args.annotate_static)


def cmd_bake(args) -> int:
    from .commands import blender_jobs as cli_jobs
    return cli_jobs.bake_to_blend(args.scene, args.frames, args.blend, args.substeps, args.backend,
                                  pd_gains=args.pd_gains)


def cmd_dataset(args) -> int:
    from .dataset.run import run_dataset
    return run_dataset(args.job, args.out, args.workers, args.ray, args.resume,
                       print_fn=lambda line: print(line, flush=True), chunk=args.chunk)


def cmd_demo(args) -> int:
    from .commands import blender_jobs as cli_jobs
    return cli_jobs.demo(args.scene, args.out, args.frames, args.samples, render=not args.no_render)


def _gains(text: str) -> tuple[float, float]:
    try:
        kp, kd = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected KP,KD (two numbers), got {text!r}") from None
    if kp < 0 or kd < 0:
        raise argparse.ArgumentTypeError("PD gains must not be negative")
    return kp, kd


def _backend_argument(p) -> None:
    p.add_argument("--backend", choices=["auto", "numba", "numpy"], default=None,
                   help="physics core: compiled kernels (numba, compiled once per machine into a user cache) "
                        "or the numpy reference; default auto (numba where it imports; env RSCENE_SIM_BACKEND)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rscene_addon", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("validate", help="check scene files: record counts, warnings, errors (file:line)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(run=cmd_validate)

    p = sub.add_parser("convert", help="convert a scene file; an unchanged .rscene is copied byte for byte")
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    p.add_argument("--to", choices=["rscene", "raisim_xml", "coppelia_xml", "airsim"],
                   help="target format (default: from OUT's extension)")
    p.set_defaults(run=cmd_convert)

    p = sub.add_parser("simulate", help="run the bundled physics core and write trajectories (.npz)")
    p.add_argument("scene", metavar="SCENE")
    p.add_argument("--duration", type=float, default=2.0, help="seconds to simulate (default 2.0)")
    p.add_argument("--fps", type=float, default=60.0, help="frames per second stored (default 60)")
    p.add_argument("--substeps", type=int, default=None,
                   help="physics steps per frame (default: from the scene's time_step)")
    p.add_argument("--out", required=True, metavar="TRAJ.npz")
    _backend_argument(p)
    p.set_defaults(run=cmd_simulate)

    p = sub.add_parser("import", help="import scene files into a new .blend (needs bpy)")
    p.add_argument("files", nargs="+", metavar="IN")
    p.add_argument("--blend", required=True, metavar="OUT.blend")
    p.set_defaults(run=cmd_import)

    p = sub.add_parser("export", help="export the scene of a .blend to a scene file (needs bpy)")
    p.add_argument("blend", metavar="IN.blend")
    p.add_argument("output", metavar="OUT")
    p.set_defaults(run=cmd_export)

    p = sub.add_parser("bake", help="import a scene, simulate it and save the motion as keyframes in a .blend "
                                    "(needs bpy)")
    p.add_argument("scene", metavar="SCENE")
    p.add_argument("--frames", default="1-250", metavar="A-B", help="inclusive frame range (default 1-250)")
    p.add_argument("--blend", required=True, metavar="OUT.blend")
    p.add_argument("--substeps", type=int, default=None, help="physics steps per frame (default: time_step)")
    p.add_argument("--pd-gains", type=_gains, default=None, metavar="KP,KD",
                   help="drive every robot's joints with PD gains KP,KD (stiffness N m/rad, damping N m s/rad): "
                        "they hold their start configuration (default: passive; see docs/robots.md)")
    _backend_argument(p)
    p.set_defaults(run=cmd_bake)

    from .commands.render_job import add_arguments as add_render_arguments
    p = sub.add_parser("render", help="render cameras, lidars and IMUs over frames: RGB, depth, ids, "
                                      "normals, points, CSV + manifest (needs bpy)")
    add_render_arguments(p)
    p.set_defaults(run=cmd_render)

    p = sub.add_parser("export-annotations", help="write COCO and/or BOP annotations from a render output "
                                                   "folder (plain Python)")
    p.add_argument("out_dir", metavar="OUT_DIR", help="a render's output folder (manifest.json or chunk manifests)")
    p.add_argument("--coco", action="store_true", help="COCO instances, {sensor}/coco_instances.json")
    p.add_argument("--bop", action="store_true", help="BOP scenes under OUT_DIR/bop (neither flag: both)")
    p.add_argument("--sensors", nargs="+", default=None, metavar="NAME", help="only these camera sensors")
    p.add_argument("--annotate-static", action="store_true",
                   help="annotate static background (ground, terrain, static bodies) as objects too")
    p.set_defaults(run=cmd_export_annotations)

    from .dataset.run import add_arguments as add_dataset_arguments
    p = sub.add_parser("dataset", help="render many scenes x variations x frames in work units, on local "
                                       "worker processes or a Ray cluster; resumable (needs bpy)")
    add_dataset_arguments(p)
    p.set_defaults(run=cmd_dataset)

    p = sub.add_parser("demo", help="the main job: import + simulate + bake + render a scene (needs bpy)")
    p.add_argument("scene", nargs="?", default=DEMO_SCENE, metavar="SCENE",
                   help="scene to use (default: the bundled demo scene)")
    p.add_argument("--out", default="out/demo", help="output folder (default out/demo)")
    p.add_argument("--frames", type=int, default=24, help="frames to simulate and render (default 24)")
    p.add_argument("--samples", type=int, default=8, help="Cycles samples per pixel (default 8)")
    p.add_argument("--no-render", action="store_true", help="stop after baking and saving the .blend")
    p.set_defaults(run=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
        if "--" in sys.argv:  # inside `blender --background --python ... -- args`
            argv = sys.argv[sys.argv.index("--") + 1:]
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return args.run(args)
    except FormatError as exc:
        print("\n".join(describe(exc, limit=None)), file=sys.stderr)
        return 1
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("cancelled", file=sys.stderr)
        return 130
