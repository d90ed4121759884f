"""The add-on's Blender classes, registered in dependency order (properties first, then operators, UI)."""
import bpy


def _modules():
    from .blender import props
    from .ops import io_ops, render_ops, robot_ops, sim_ops
    from .ui import panels, render_panel
    return (props, io_ops, sim_ops, robot_ops, render_ops, panels, render_panel)


def register():
    for module in _modules():
        for cls in module.CLASSES:
            bpy.utils.register_class(cls)
        if hasattr(module, "register_extra"):
            module.register_extra()


def unregister():
    for module in reversed(_modules()):
        if hasattr(module, "unregister_extra"):
            module.unregister_extra()
        for cls in reversed(module.CLASSES):
            bpy.utils.unregister_class(cls)
