"""The driver's progress line: units and frames done, failures, frames per minute, time left (pure)."""
from __future__ import annotations

import time

__all__ = ["Progress", "format_duration"]


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """Counts units; ``line()`` says where the run stands. Units found complete before the run
    (``skipped``) count as done but not in the rate."""

    def __init__(self, total_units: int, total_frames: int, skipped_units: int = 0, skipped_frames: int = 0,
                 clock=time.monotonic) -> None:
        self.total_units, self.total_frames = total_units, total_frames
        self.done_units, self.done_frames = skipped_units, skipped_frames
        self.failed_units = 0
        self.failed_frames = 0
        self._new_frames = 0
        self._clock = clock
        self._start = clock()

    def done(self, frames: int) -> None:
        self.done_units += 1
        self.done_frames += frames
        self._new_frames += frames

    def failed(self, frames: int) -> None:
        self.failed_units += 1
        self.failed_frames += frames

    def frames_per_minute(self) -> float:
        elapsed = self._clock() - self._start
        return 60.0 * self._new_frames / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        rate = self.frames_per_minute()
        left = self.total_frames - self.done_frames - self.failed_frames
        eta = format_duration(60.0 * left / rate) if rate > 0 else "?"
        failed = f", {self.failed_units} failed" if self.failed_units else ""
        return (f"units {self.done_units}/{self.total_units} done{failed} | frames {self.done_frames}/"
                f"{self.total_frames} | {rate:.1f} frames/min | {eta if left else '0s'} left")
