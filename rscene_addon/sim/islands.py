"""Islands: connected components of bodies linked by contacts or wires, vectorised."""
from __future__ import annotations

import numpy as np


def island_labels(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Labels (n,) of n nodes linked by edges (a[k], b[k]): each node gets the smallest node index of
    its component.

    Every node repeatedly takes its neighbours' smallest label and then its label's label (pointer
    jumping). Labels only decrease and always name a node of the same component, so the fixed point is
    constant on each component and equals its smallest index."""
    label = np.arange(n)
    if len(a) == 0:
        return label
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    while True:
        low = np.minimum(label[a], label[b])
        new = label.copy()
        np.minimum.at(new, a, low)
        np.minimum.at(new, b, low)
        new = new[new]
        if np.array_equal(new, label):
            return label
        label = new
