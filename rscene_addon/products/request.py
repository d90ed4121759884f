"""A render run as data: what to render (:class:`RenderRequest`), what came out (:class:`RenderResult`)
and why it could not (:class:`RenderError`) (pure).

``render.run(request) -> RenderResult`` is the one entry point: the ``render`` command and the
``dataset`` units both call it; a failure is a :class:`RenderError` carrying its message and the
scene's diagnostics, never an exit status to interpret or a log to read.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .chunks import parse_chunk, parse_frame_range
from .plan import RenderOptions, split_names

__all__ = ["RenderError", "RenderRequest", "RenderResult"]


class RenderError(RuntimeError):
    """A render that could not run or finish: a bad scene (``diagnostics``: one line per problem, with
    file and line), an unknown sensor, a missing pass, no Blender. ``str()`` is the message and the
    first 20 diagnostics, one per line."""

    def __init__(self, message: str, diagnostics=()) -> None:
        self.message = message
        self.diagnostics = tuple(str(d) for d in diagnostics)
        super().__init__("\n  ".join((message, *self.diagnostics[:20])))


@dataclass(frozen=True)
class RenderRequest:
    """``scene``: a ``.blend`` (opened as is) or a scene file (imported into an empty file); ``frames``:
    ``"A-B[:STEP]"``, a list, or None (the scene's range); ``chunk``: ``"K/N"`` or ``(K, N)``: the K-th
    of N contiguous slices of the frames; ``sensors``: names (None: every enabled sensor);
    ``annotate``: write the COCO/BOP files ``options.products`` asks for after the frames (not for a
    chunk: those are written once every chunk is done). ``simulate``: a scene with dynamic bodies
    (objects, robots, particles, cloth) and no baked motion is first simulated from its start frame
    and baked as the ``bake`` command does (``substeps``, ``backend`` as there; False: render it
    frozen as it stands)."""

    scene: str
    out_dir: str
    frames: object = None
    samples: int | None = None
    sensors: tuple | None = None
    chunk: object = None
    options: RenderOptions = field(default_factory=RenderOptions)
    annotate: bool = True
    simulate: bool = True
    substeps: int | None = None
    backend: str | None = None

    def __post_init__(self) -> None:  # bad values fail here, before Blender opens anything
        if self.substeps is not None and int(self.substeps) < 1:
            raise RenderError(f"substeps must be at least 1, got {self.substeps}")
        if self.backend not in (None, "auto", "numba", "numpy"):
            raise RenderError(f"unknown physics backend {self.backend!r}; use auto, numba, numpy")
        try:
            object.__setattr__(self, "chunk", parse_chunk(self.chunk))
            if isinstance(self.frames, str):
                object.__setattr__(self, "frames", tuple(parse_frame_range(self.frames)))
            elif self.frames is not None:
                object.__setattr__(self, "frames", tuple(int(f) for f in self.frames))
            names = split_names(self.sensors)
            object.__setattr__(self, "sensors", tuple(names) if names else None)
        except (TypeError, ValueError) as exc:
            raise RenderError(str(exc)) from None


@dataclass
class RenderResult:
    """What a run wrote: ``manifest`` (path), ``files`` (paths relative to ``out_dir``), ``sensors``
    (``{name: {frame: {"layer.ext": absolute path}}}``), ``warnings``, ``timings`` (seconds per step,
    as ``render_scene`` reports them), ``cancelled``, ``annotations`` (``export_annotations``' result,
    or None) and ``specs`` (``(name, kind, products)`` per sensor rendered)."""

    out_dir: str
    frames: list
    manifest: str | None = None
    files: list = field(default_factory=list)
    sensors: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    cancelled: bool = False
    annotations: dict | None = None
    specs: list = field(default_factory=list)
    seconds: float = 0.0
