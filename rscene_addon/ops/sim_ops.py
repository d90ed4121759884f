"""Simulate the scene with the bundled physics core and bake the motion into keyframes.

The steps are those of the ``bake`` and ``render`` commands (``blender.simulation``). The physics runs in a
worker thread (numpy or compiled kernels; it never touches bpy) while a modal operator shows progress and
listens for ESC; the keyframes are written on the main thread when it finishes. A first compile of the
kernels runs in that thread too (the interface stays live, the status bar counts its functions, ESC stops
it). In background mode (no window) the operator simply runs to the end.
"""
from __future__ import annotations

import threading

import bpy
from bpy.props import BoolProperty, IntProperty


class RSCENE_OT_bake_simulation(bpy.types.Operator):
    """Simulate the scene with the bundled physics core and bake the motion into keyframes (ESC cancels)"""

    bl_idname = "rscene.bake_simulation"
    bl_label = "Bake Simulation"
    bl_options = {"REGISTER", "UNDO"}

    frame_start: IntProperty(name="Start Frame", default=1)
    frame_end: IntProperty(name="End Frame", default=120, min=1)
    substeps: IntProperty(name="Substeps", default=0, min=0,
                          description="Physics steps per frame (0: from the scene's time step)")
    from_current_pose: BoolProperty(name="Start from Current Pose", default=True,
                                    description="Use the objects as they are now in Blender (edits included; "
                                                "a baked body from where it was before its bake). Off: the "
                                                "scene as its file says, Blender edits left out")

    def invoke(self, context, event):
        self.frame_start, self.frame_end = context.scene.frame_start, context.scene.frame_end
        return self.execute(context)

    def execute(self, context):
        from ..blender.simulation import prepare
        try:  # reads Blender on the main thread: the start pose, animated kinematic bodies, PD drives
            self._run = prepare(context.scene, self.frame_start, self.frame_end, self.substeps or None,
                                from_current_pose=self.from_current_pose,
                                backend=context.scene.rscene.sim_backend,
                                say=lambda text: self._say(context, text))
        except (OSError, ValueError) as exc:  # bad PD gains, numba asked for where it does not import
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        if context.window is None or bpy.app.background:  # no status bar: a first compile counts on the console
            from ..sim import compile_watch
            return self._finish(context, self._run.run(compile_progress=compile_watch.printer()))
        self._fraction, self._cancelled, self._result, self._error = 0.0, False, None, None
        self._compiling = None  # the last CompileStatus while kernels compile

        def work():
            try:
                self._result = self._run.run(progress=lambda f: setattr(self, "_fraction", f),
                                             cancel=lambda: self._cancelled,
                                             compile_progress=lambda st: setattr(self, "_compiling", st))
            except Exception as exc:  # noqa: BLE001 - reported on the main thread
                self._error = exc
        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def _say(self, context, text: str) -> None:
        """A one-off notice: the report line, the status bar, the console (from the worker thread, where a
        kernel part starts compiling, only the console: bpy is the main thread's)."""
        if threading.current_thread() is not threading.main_thread():
            print(f"rscene: {text}", flush=True)
            return
        self.report({"INFO"}, text)
        if context.workspace is not None:
            context.workspace.status_text_set(text)
        print(f"rscene: {text}", flush=True)

    def modal(self, context, event):
        wm = context.window_manager
        if event.type == "ESC":
            self._cancelled = True
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        wm.progress_update(int(100 * self._fraction))
        compiling = self._compiling
        if compiling is not None and self._fraction == 0.0:
            text = compiling.line()
        else:
            text = f"Simulating: {int(100 * self._fraction)}%"
        context.workspace.status_text_set(f"{text} (ESC to cancel)")
        if self._thread.is_alive():
            return {"RUNNING_MODAL"}
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        context.workspace.status_text_set(None)
        if self._error is not None:
            self.report({"WARNING"} if self._cancelled else {"ERROR"},
                        "simulation cancelled" if self._cancelled else f"simulation failed: {self._error}")
            return {"CANCELLED"}
        return self._finish(context, self._result)

    def _finish(self, context, trajectory):
        from ..blender.simulation import SimulationFailed
        try:
            count = self._run.bake(trajectory)
        except SimulationFailed as exc:  # a non-finite trajectory keys nothing
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"baked {count} bodies over {len(trajectory.time)} frames")
        return {"FINISHED"}


class RSCENE_OT_clear_bake(bpy.types.Operator):
    """Remove the keyframes a simulation bake wrote (other animation is kept) and put the bodies back where they were before the bake"""

    bl_idname = "rscene.clear_bake"
    bl_label = "Clear Simulation Bake"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        from ..blender.bake import clear_bake
        count = clear_bake(context.scene)
        self.report({"INFO"}, f"cleared {count} baked objects")
        return {"FINISHED"}


class RSCENE_PT_simulation(bpy.types.Panel):
    bl_label = "RaiSim Simulation"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "scene"

    def draw(self, context):
        col = self.layout.column()
        col.prop(context.scene.rscene, "sim_backend")
        col.operator(RSCENE_OT_bake_simulation.bl_idname, icon="PHYSICS")
        col.operator(RSCENE_OT_clear_bake.bl_idname, icon="X")


CLASSES = (RSCENE_OT_bake_simulation, RSCENE_OT_clear_bake, RSCENE_PT_simulation)


def register_extra():
    # compiled physics kernels go to the extension's user folder from the start (any World built later
    # in this session compiles or loads there); no numba import here
    from ..blender.bake import kernel_cache_folder
    from ..sim import kernels
    folder = kernel_cache_folder()
    if folder:
        kernels.set_cache_dir(folder)
