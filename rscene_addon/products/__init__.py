"""What a render makes, without Blender: the product table, the writers, the manifest, COCO and BOP.

The Blender side (:mod:`rscene_addon.render`) produces ``{layer: array}`` per sensor and frame; everything
here is plain Python + numpy and is tested without Blender. One job per module:

* :mod:`.table` the product table: every product's needs, layers, dtypes, units and writer
* :mod:`.write` writes one frame's arrays through the table into files and the manifest
* :mod:`.plan` which sensors exist, their products, intrinsics and options
* :mod:`.chunks` inclusive frame ranges, ``K/N`` chunks and their manifest names
* :mod:`.outputs` the manifest with several files per layer, merging chunk manifests
* :mod:`.segmentation` instance/class ids, colours, 2D boxes from an id image
* :mod:`.timing` frame times, lidar/IMU windows, pose interpolation
* :mod:`.cryptomatte` decoding Cycles' Cryptomatte ranks into instance ids
* :mod:`.embree_parts` ctypes binding for moving Embree geometry in place (optional ``embreex`` wheel)
* :mod:`.annotations`, :mod:`.coco`, :mod:`.bop` COCO and BOP files from a finished render folder
"""
