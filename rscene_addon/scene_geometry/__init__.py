"""What a scene record *is* geometrically and physically, computed once for every view of the scene.

Blender (``blender/``) and the simulator (``sim/``) are two views of one scene model; neither re-interprets
records on its own. This package turns records into geometry: a granular record's particles
(:mod:`.particles`), a deformable record's cloth mesh and pins (:mod:`.cloth_mesh`), mesh files and
``.rasset`` descriptors (:mod:`.mesh_files`), a mesh inlined in its record (:mod:`.inline_mesh`). Pure Python (numpy); it imports only ``model`` and ``base``.
"""
