"""``rscene.render_sensors``: render the scene's camera, lidar and IMU sensors over a frame range.

Thin: read the settings, build a :class:`~..render.pipeline.RenderJob`, run it. In the UI it runs as
a modal operator driven by a timer, one step (a camera render, a lidar or IMU frame) per tick, with
the window manager's progress bar and Esc to cancel between steps; in background mode (or from a
script calling ``execute``) it runs to the end at once. The run's settings live in
``Scene.rscene_render`` (drawn by ``ui/render_panel.py``); operator properties left unset fall back to
them.
"""
from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty, PointerProperty, StringProperty

from ..model import FormatError
from ..products.table import PRODUCTS


# Blender stores the ticked switches by position: the products the panel had first keep their places,
# new rows of the product table come after them
_PANEL_FIRST = ("rgb", "depth", "segmentation", "normal", "flow", "object_coords", "amodal", "lidar", "imu")
_PANEL = _PANEL_FIRST + tuple(name for name, row in PRODUCTS.items() if name not in _PANEL_FIRST
                              and row.sensor != "folder" and name not in ("cryptomatte", "passes"))  # own boxes
PRODUCT_ITEMS = tuple((name, PRODUCTS[name].label, PRODUCTS[name].summary[:1].upper() + PRODUCTS[name].summary[1:])
                      for name in _PANEL)
DEFAULT_PRODUCTS = {name for name in _PANEL if not PRODUCTS[name].opt_in}


class RSCENE_PG_render_settings(bpy.types.PropertyGroup):
    products: EnumProperty(name="Products", items=PRODUCT_ITEMS, options={"ENUM_FLAG"}, default=DEFAULT_PRODUCTS,
                           description="What to write; without RGB no Cycles render runs (annotations only)")
    use_gpu: BoolProperty(name="GPU", default=False,
                          description="Render RGB on the GPU (the first GPU render compiles kernels: minutes)")
    sensors: StringProperty(
        name="Sensors", default="",
        description="Comma-separated record paths or ids, or Blender camera names; empty: every enabled "
                    "camera and sensor record")
    use_scene_range: BoolProperty(name="Scene Frame Range", default=True,
                                  description="Render the scene's frame range")
    frame_start: IntProperty(name="Start", default=1, min=0)
    frame_end: IntProperty(name="End", default=1, min=0)
    output_dir: StringProperty(name="Output", default="//sensors/", subtype="DIR_PATH",
                               description="Folder for the {sensor}/{layer}_{frame}.{ext} files and manifest")
    samples: IntProperty(name="Max Samples", default=16, min=0,
                         description="Cap on Cycles samples per pixel; 0: the rayrai_render preset's")
    range_image: BoolProperty(name="Range Images", default=False,
                              description="Also write distance to the camera centre next to planar depth")
    keep_exr: BoolProperty(name="Keep EXR Passes", default=False,
                           description="Keep Cycles' multilayer EXR of every camera frame")
    rgb_16bit: BoolProperty(name="16-bit RGB", default=False)
    cryptomatte: BoolProperty(name="Cryptomatte Masks", default=False,
                              description="Also write anti-aliased per-instance coverage (soft masks); "
                                          "renders with a 1 px box filter while on")
    cryptomatte_levels: IntProperty(name="Levels", default=6, min=2, max=16,
                                    description="Objects kept per pixel, largest coverage first")
    coco: BoolProperty(name="COCO Annotations", default=False,
                       description="After the frames: {sensor}/coco_instances.json (RLE masks, classes)")
    bop: BoolProperty(name="BOP Annotations", default=False,
                      description="After the frames: BOP scenes under bop/ (poses, masks, depth, gt info)")
    previews: BoolProperty(name="Previews", default=True,
                           description="Colourised PNGs beside depth, ids, normals and flow "
                                       "({layer}_preview_{frame}.png), for a glance")


def _settings(context):
    return getattr(context.scene, "rscene_render", None)


def _products(settings):
    """The panel's products (None: the defaults), Cryptomatte added when its box is ticked."""
    if settings is None:
        return None
    chosen = set(settings.products)
    if settings.cryptomatte:
        chosen.add("cryptomatte")
    from ..products.annotations import with_needed_products
    wanted = {name for name in ("coco", "bop") if getattr(settings, name, False)}
    if chosen == DEFAULT_PRODUCTS and not wanted:
        return None
    # what COCO / BOP read; "bop" itself stays: the render then writes BOP's models and JPEG images
    return frozenset(with_needed_products(chosen | wanted))


class RSCENE_OT_render_sensors(bpy.types.Operator):
    """Render the scene's cameras, lidars and IMUs to files over a frame range (Esc cancels)"""

    bl_idname = "rscene.render_sensors"
    bl_label = "Render Sensors"
    bl_options = {"REGISTER"}

    sensors: StringProperty(name="Sensors", default="",
                            description="Comma list of sensors; empty: every enabled camera and sensor")
    frame_start: IntProperty(name="Start", default=-1, min=-1, description="-1: the scene's start frame")
    frame_end: IntProperty(name="End", default=-1, min=-1, description="-1: the scene's end frame")
    output_dir: StringProperty(name="Output", default="", subtype="DIR_PATH")
    samples: IntProperty(name="Max Samples", default=-1, min=-1, description="-1: from the scene's settings; "
                         "0: the rayrai_render preset's")

    _job = None
    _steps = None
    _timer = None

    # -- settings ----------------------------------------------------------------------------------

    def _value(self, context, name: str, fallback):
        if self.properties.is_property_set(name):
            return getattr(self, name)
        settings = _settings(context)
        return getattr(settings, name) if settings is not None and hasattr(settings, name) else fallback

    def _make_job(self, context):
        from ..render.pipeline import RenderJob
        from ..products.plan import RenderOptions
        scene = context.scene
        settings = _settings(context)
        start, end = scene.frame_start, scene.frame_end
        if settings is not None and not settings.use_scene_range:
            start, end = settings.frame_start, settings.frame_end
        if self.frame_start >= 0:
            start = self.frame_start
        if self.frame_end >= 0:
            end = self.frame_end
        if end < start:
            raise ValueError(f"frame end {end} is before start {start}")
        out = self._value(context, "output_dir", "//sensors/") or "//sensors/"
        if out.startswith("//") and not bpy.data.filepath:
            raise ValueError("save the .blend first or choose an absolute output folder")
        out = bpy.path.abspath(out)
        samples = self._value(context, "samples", 0)
        options = RenderOptions(
            samples=samples if samples and samples > 0 else None,
            rgb_bit_depth=16 if settings is not None and settings.rgb_16bit else 8,
            range_image=bool(settings is not None and settings.range_image),
            keep_exr=bool(settings is not None and settings.keep_exr),
            cryptomatte=settings.cryptomatte_levels if settings is not None and settings.cryptomatte else 0,
            products=_products(settings),
            device="GPU" if settings is not None and settings.use_gpu else "CPU",
            scale=scene.render.resolution_percentage,  # Output > Format > %: every sensor, K scaled exactly
            previews=bool(settings is None or settings.previews),
            require_products=False,  # the switches filter what the chosen sensors make
        )
        def report(level, message):
            self.report({level}, message)

        sensors = self._value(context, "sensors", "")
        return RenderJob(scene, out, range(start, end + 1), None, sensors, options, report=report)

    # -- synchronous -------------------------------------------------------------------------------

    def execute(self, context):
        try:
            job = self._make_job(context)
        except (ValueError, FormatError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        wm = context.window_manager
        wm.progress_begin(0, 1000)
        try:
            result = job.run(lambda fraction, message: wm.progress_update(int(1000 * fraction)))
        except (RuntimeError, ValueError, OSError) as exc:
            self.report({"ERROR"}, f"sensor render failed: {exc}")
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        self._report_result(result)
        self._annotate(context, result)
        return {"FINISHED"}

    # -- modal -------------------------------------------------------------------------------------

    def invoke(self, context, event):
        if bpy.app.background or context.window is None:
            return self.execute(context)
        try:
            self._job = self._make_job(context)
        except (ValueError, FormatError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self._steps = self._job.steps()
        wm = context.window_manager
        wm.progress_begin(0, 1000)
        self._timer = wm.event_timer_add(0.01, window=context.window)
        wm.modal_handler_add(self)
        self._status(context, "starting")
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC":
            self._finish(context)
            self.report({"WARNING"}, "sensor render cancelled; the manifest lists what was written")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        try:
            fraction = next(self._steps)
        except StopIteration:
            result = self._job.result
            self._finish(context)
            self._report_result(result)
            self._annotate(context, result)
            return {"FINISHED"}
        except Exception as exc:  # noqa: BLE001 - any failure must end the modal run cleanly
            self._finish(context)
            self.report({"ERROR"}, f"sensor render failed: {exc}")
            return {"CANCELLED"}
        context.window_manager.progress_update(int(1000 * fraction))
        self._status(context, f"{100 * fraction:.0f}% {self._job.status}")
        return {"RUNNING_MODAL"}

    def cancel(self, context):
        self._finish(context)

    def _finish(self, context) -> None:
        if self._steps is not None:
            self._steps.close()  # restores the scene and writes the manifest
            self._steps = None
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        self._status(context, None)

    @staticmethod
    def _status(context, text) -> None:
        workspace = getattr(context, "workspace", None)
        if workspace is not None:
            workspace.status_text_set(None if text is None else f"Rendering sensors: {text} (Esc to cancel)")

    def _annotate(self, context, result) -> None:
        """COCO / BOP files from what the run wrote, when the settings ask for them."""
        settings = _settings(context)
        coco, bop = bool(getattr(settings, "coco", False)), bool(getattr(settings, "bop", False))
        if not (coco or bop) or result.get("cancelled") or not result.get("out_dir"):
            return
        from ..products.annotations import export_annotations
        try:
            export_annotations(result["out_dir"], coco, bop, report=lambda line: self.report({"INFO"}, line))
        except (OSError, ValueError, KeyError) as exc:
            self.report({"ERROR"}, f"annotations failed: {exc}")

    def _report_result(self, result) -> None:
        renders = result["timings"]["camera_render_s"]
        per = f", {sum(renders) / len(renders):.2f} s per camera frame" if renders else ""
        where = os.path.dirname(result["manifest"]) if result.get("manifest") else "?"
        self.report({"INFO"}, f"wrote {len(result['files'])} files to {where}{per}")


CLASSES = (RSCENE_PG_render_settings, RSCENE_OT_render_sensors)


def register_extra():
    bpy.types.Scene.rscene_render = PointerProperty(type=RSCENE_PG_render_settings)


def unregister_extra():
    del bpy.types.Scene.rscene_render
