"""COCO instance annotations from instance id images (pure: arrays in, JSON-ready dicts out).

One COCO file per camera sensor (``{sensor}/coco_instances.json``): an ``images`` entry per frame
(``file_name`` relative to the file's own folder, so the RGB PNGs next to it), one annotation per
instance visible in a frame, ``categories`` from the semantic classes.

Segmentations are run-length encoded exactly as COCO specifies (pycocotools' ``maskUtils.encode``):
the mask is read in column-major order (down the first column, then the next), ``counts`` alternate
runs of 0 and 1 starting with a (possibly empty) run of 0, and are stored compressed as a string:
each count minus the count two places before it (from the fourth on) in little-endian groups of 5
bits, a 6th bit marking that more groups follow, plus 48 to make it printable. RLE keeps every pixel;
polygons would not. ``iscrowd`` is 0: each annotation is one object instance.

``bbox`` is ``[x, y, width, height]`` in pixels around the mask's pixels (``x`` of the left-most
column, ``width`` = columns spanned), ``area`` the mask's pixel count, as pycocotools computes them.
Category ids are the semantic class ids of the ``semantic`` images (1..); instances without a class
get one extra category ``unlabelled`` (id = largest class id + 1), never 0, which many training
pipelines reserve for background.
"""
from __future__ import annotations

import numpy as np

__all__ = ["UNLABELLED", "categories", "encode_counts", "instance_annotations", "mask_bbox", "rle_counts",
           "rle_encode"]

UNLABELLED = "unlabelled"


def rle_counts(mask) -> list[int]:
    """Uncompressed COCO run lengths of a 2-D mask (column-major, first run counts zeros)."""
    mask = np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"mask must be (H, W), got shape {mask.shape}")
    flat = mask.astype(bool).ravel(order="F")
    if flat.size == 0:
        return [0]
    # positions where the value changes, plus both ends; a leading 1 gives an empty first run of zeros
    edges = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    bounds = np.concatenate(([0], edges, [flat.size]))
    runs = np.diff(bounds).tolist()
    return [0] + runs if flat[0] else runs


def encode_counts(counts) -> str:
    """COCO's compressed string of run lengths (pycocotools ``rleToString``)."""
    out = bytearray()
    counts = [int(c) for c in counts]
    for i, count in enumerate(counts):
        x = count - counts[i - 2] if i > 2 else count
        more = True
        while more:
            c = x & 0x1F
            x >>= 5  # arithmetic shift: a negative difference ends at -1
            more = x != -1 if c & 0x10 else x != 0
            if more:
                c |= 0x20
            out.append(c + 48)
    return out.decode("ascii")


def rle_encode(mask) -> dict:
    """``{"size": [H, W], "counts": str}``: a mask in COCO's compressed RLE."""
    mask = np.asarray(mask)
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": encode_counts(rle_counts(mask))}


def mask_bbox(mask) -> list[int]:
    """``[x, y, width, height]`` of a mask's pixels (pycocotools ``toBbox``); zeros when empty."""
    mask = np.asarray(mask, dtype=bool)
    cols, rows = np.flatnonzero(mask.any(axis=0)), np.flatnonzero(mask.any(axis=1))
    if cols.size == 0:
        return [0, 0, 0, 0]
    return [int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)]


def categories(classes: dict, used_unlabelled: bool) -> list[dict]:
    """COCO categories from ``{class id: name}`` (id 0, background/unlabelled, left out), plus
    ``unlabelled`` (id = largest + 1) when some instance has no class."""
    named = {int(k): str(v) for k, v in classes.items() if int(k) > 0}
    out = [{"id": k, "name": named[k], "supercategory": "object"} for k in sorted(named)]
    if used_unlabelled:
        out.append({"id": unlabelled_id(classes), "name": UNLABELLED, "supercategory": "object"})
    return out


def unlabelled_id(classes: dict) -> int:
    return max((int(k) for k in classes), default=0) + 1


def instance_runs(instance, background: int = -1) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Every instance's runs at once: ``{id: (starts, ends)}``, the column-major pixel ranges
    ``[start, end)`` it covers, in order. One pass over the image whatever the number of instances."""
    flat = np.asarray(instance).ravel(order="F")
    if flat.size == 0:
        return {}
    edges = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    starts = np.concatenate(([0], edges))
    ends = np.concatenate((edges, [flat.size]))
    ids = flat[starts]
    keep = ids != background
    starts, ends, ids = starts[keep], ends[keep], ids[keep]
    order = np.argsort(ids, kind="stable")  # stable: each id's runs stay in image order
    starts, ends, ids = starts[order], ends[order], ids[order]
    cuts = np.flatnonzero(ids[1:] != ids[:-1]) + 1
    return {int(group_ids[0]): (s, e) for group_ids, s, e in
            zip(np.split(ids, cuts), np.split(starts, cuts), np.split(ends, cuts)) if len(group_ids)}


def _from_runs(starts: np.ndarray, ends: np.ndarray, height: int, size: int) -> tuple[list[int], int, list[int]]:
    """``(counts, area, bbox)`` of one instance's runs over an image of ``size`` pixels (see
    :func:`rle_counts`, :func:`mask_bbox`)."""
    gaps = starts - np.concatenate(([0], ends[:-1]))
    tail = size - int(ends[-1])
    counts = np.empty(2 * len(starts) + (tail > 0), dtype=np.int64)
    counts[0:2 * len(starts):2], counts[1:2 * len(starts):2] = gaps, ends - starts
    if tail:
        counts[-1] = tail  # the zeros after the last run, as COCO's encoder writes them
    x0, x1 = int(starts[0] // height), int((ends[-1] - 1) // height)
    # a run that goes on into the next column covers the last row of one and the first of the next
    wraps = bool(np.any(starts // height != (ends - 1) // height))
    y0 = 0 if wraps else int((starts % height).min())
    y1 = height - 1 if wraps else int(((ends - 1) % height).max())
    return counts.tolist(), int((ends - starts).sum()), [x0, y0, x1 - x0 + 1, y1 - y0 + 1]


def instance_annotations(instance, class_of: dict, classes: dict, background: int = -1) -> list[dict]:
    """One COCO annotation (without ``id``/``image_id``) per instance id in ``instance`` (H, W), in id
    order: ``category_id`` from ``class_of`` ({instance id: class id}, 0 or missing: unlabelled),
    RLE ``segmentation``, ``area``, ``bbox``, ``iscrowd`` 0, and our ``instance_id``."""
    instance = np.asarray(instance)
    if instance.ndim != 2:
        raise ValueError(f"instance image must be (H, W), got shape {instance.shape}")
    spare = unlabelled_id(classes)
    height, width = instance.shape
    out = []
    for iid, (starts, ends) in sorted(instance_runs(instance, background).items()):
        counts, area, bbox = _from_runs(starts, ends, height, height * width)
        class_id = int(class_of.get(iid, 0))
        out.append({
            "instance_id": iid,
            "category_id": class_id if class_id > 0 else spare,
            "segmentation": {"size": [height, width], "counts": encode_counts(counts)},
            "area": area,
            "bbox": bbox,
            "iscrowd": 0,
        })
    return out
