"""RaiSim Scene Tools: robotics scene files in Blender (import, edit, export, simulate, render).

This file only registers and unregisters the add-on; everything else lives in the subpackages.
bpy is imported inside ``register`` so the pure layers stay importable in plain Python.
"""


def register():
    from . import registration
    registration.register()


def unregister():
    from . import registration
    registration.unregister()
