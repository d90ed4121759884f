"""The Blender bridge: scene model <-> bpy data (import, export, bake). The only layer besides render/
that touches bpy."""
