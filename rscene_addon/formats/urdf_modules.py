"""URDF modules: fragments (links, joints, sensor links) RaiSim inserts into a URDF before ``</robot>``.

``ArticulatedSystem.rst`` ("URDF modules"): ``addArticulatedSystem(urdfPath, modules, resDir)`` finds each
module, first match wins, as an absolute path, then ``[baseDir]/<module>``, ``[baseDir]/modules/<module>``,
``[baseDir]/../modules/<module>``, ``[baseDir]/module/<module>``, ``[baseDir]/../module/<module>``;
``baseDir`` is the URDF's directory unless a resource directory is given. The modules go in, in the order
given, before the URDF's closing ``</robot>``. (RaiSim writes the result to
``generated_<urdf>_<modules>.urdf`` and loads that; here it is read from memory and nothing is written.)
Relative paths inside a module (meshes, ``sensor=`` files) resolve from the URDF's directory, as in
RaiSim's generated file beside it.
"""
from __future__ import annotations

import os

from ..model import Diagnostic, FormatError
from .atomic import read_source
from .search_path import find_in

__all__ = ["SEARCH", "find_module", "with_modules"]

SEARCH = ("", "modules", os.path.join("..", "modules"), "module", os.path.join("..", "module"))


def find_module(name: str, base_dir: str) -> str | None:
    """The module file ``name`` where RaiSim finds it, or None."""
    return find_in(name, base_dir, SEARCH)


def with_modules(text: str, path: str, modules, resource_directory: str = "") -> str:
    """The URDF ``text`` (read from ``path``) with each module inserted before its last ``</robot>``."""
    modules = [str(m) for m in modules or () if str(m).strip()]
    if not modules:
        return text
    base_dir = resource_directory or os.path.dirname(os.path.abspath(path))
    end = text.rfind("</robot>")
    if end < 0:
        raise FormatError(Diagnostic(path, text.count("\n") + 1, "robot",
                                     "modules need a closing </robot> to go before; none found"))
    parts = []
    for name in modules:
        found = find_module(name, base_dir)
        if found is None:
            raise FormatError(Diagnostic(path, 0, "modules",
                                         f"URDF module {name!r} not found in {base_dir} (nor modules/, ../modules/, "
                                         "module/, ../module/ there)"))
        parts.append(f"<!-- module {name} ({found}) -->\n{read_source(found)}\n")
    return text[:end] + "".join(parts) + text[end:]
