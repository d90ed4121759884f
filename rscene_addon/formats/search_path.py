"""Where RaiSim looks for a file a robot names (a sensor set, a module): one rule for both."""
from __future__ import annotations

import os

__all__ = ["find_in"]


def find_in(name: str, base_dir: str, subdirs) -> str | None:
    """The first existing ``base_dir/<sub>/name`` for ``sub`` in ``subdirs`` order (an absolute ``name``:
    itself), or None."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) else None
    for sub in subdirs:
        candidate = os.path.normpath(os.path.join(base_dir, sub, name))
        if os.path.isfile(candidate):
            return candidate
    return None
