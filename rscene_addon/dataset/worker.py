"""A local pool worker: ``python -m rscene_addon.dataset.worker`` (started by ``local_pool``).

Reads one JSON request per line on stdin (``{"op": "bake" | "unit", ...}``), runs it with
``execute`` and answers one JSON line on its stdout: ``{"ok": true, "record": ..., "rss_mb": ...}`` or
``{"ok": false, "error": "..."}``. Everything else this process prints (Blender included) goes to
stderr, which the pool sends to a log file. It ends at the end of its input; the pool replaces it after
a bounded number of requests so that memory stays flat over long runs.
"""
from __future__ import annotations

import json
import os
import sys


def rss_mb() -> float:
    """This process's resident memory (MiB) from /proc, or its peak where /proc is missing."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except (OSError, ValueError, IndexError):
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2 ** 20 if sys.platform == "darwin" else 1024)


def handle(request: dict) -> dict:
    from .execute import UnitFailed, build_bake, render_unit
    try:
        if request["op"] == "bake":
            blend = build_bake(request["task"], request["dir"])
            return {"ok": True, "record": {"blend": blend}}
        record = render_unit(request["task"], request["blend"], request["dir"])
        return {"ok": True, "record": record}
    except UnitFailed as exc:
        return {"ok": False, "error": str(exc)}
    except Exception as exc:  # a bug must fail the unit, not the pool: report it with its type
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def main() -> int:
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # stray prints (and Blender's) go to the log, never into the replies
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = handle(json.loads(line))
        reply["rss_mb"] = round(rss_mb(), 1)
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


if __name__ == "__main__":
    status = main()
    sys.stderr.flush()
    os._exit(status)  # the bpy 4.5 module can hang in interpreter teardown
