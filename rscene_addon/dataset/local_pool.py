"""The embedded runner: a pool of ``--workers`` local Blender-capable processes (``worker.py``).

One thread per slot feeds its process one request at a time over a pipe. A process is replaced after
``units_per_process`` requests (Blender's memory then never grows over a long run) and when it dies;
a request whose process died is run again up to ``retries`` times, then reported failed. Each
process's output goes to ``logs/worker-<slot>.log`` in the dataset folder, not to the terminal.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

__all__ = ["LocalPool"]


def _then(first, rest):
    yield from first
    yield from rest


class _Slot:
    def __init__(self, pool: LocalPool, index: int) -> None:
        self.pool, self.index = pool, index
        self.process: subprocess.Popen | None = None
        self.served = 0

    def _start(self) -> subprocess.Popen:
        log = open(os.path.join(self.pool.log_dir, f"worker-{self.index}.log"), "ab")
        try:
            process = subprocess.Popen([sys.executable, "-m", "rscene_addon.dataset.worker"],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                       env=self.pool.env, text=True, bufsize=1)
        finally:
            log.close()
        self.pool.started += 1
        self.served = 0
        return process

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        try:
            process.stdin.close()
            process.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    def kill(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            process.kill()

    def ask(self, request: dict) -> dict:
        if self.process is not None and self.served >= self.pool.units_per_process:
            self.stop()
        if self.process is None:
            self.process = self._start()
        self.served += 1
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if line:
            return json.loads(line)
        status = self.process.wait()
        self.process = None
        return {"ok": False, "died": True, "error": f"worker process died (exit status {status})"}


class LocalPool:
    def __init__(self, workers: int, units_per_process: int, log_dir: str, retries: int = 2,
                 env: dict | None = None) -> None:
        if workers < 1:
            raise ValueError(f"--workers must be at least 1, got {workers}")
        self.units_per_process = max(1, units_per_process)
        self.retries = retries
        self.log_dir = log_dir
        os.makedirs(log_dir, exist_ok=True)
        self.env = dict(os.environ if env is None else env)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in (root, self.env.get("PYTHONPATH")) if p)
        self.slots = [_Slot(self, i) for i in range(workers)]
        self.started = 0
        self.cancelled = threading.Event()

    def run(self, requests, on_done) -> None:
        """Run ``requests`` (an iterable of ``(key, request dict)``, read as the slots take them: a
        bounded queue holds a few per slot, never the whole job); ``on_done(key, reply)`` is called
        once per key, from one thread at a time. Returns when all are done; Ctrl-C kills the processes
        and re-raises. A request whose process died runs again (a new process) up to ``retries`` times."""
        todo: queue.Queue = queue.Queue(maxsize=2 * len(self.slots))
        lock = threading.Lock()
        stop = object()

        def serve(slot: _Slot) -> None:
            while not self.cancelled.is_set():
                item = todo.get()
                if item is stop:
                    return
                key, request = item
                for attempt in range(self.retries + 1):
                    reply = slot.ask(request)
                    if self.cancelled.is_set():
                        return
                    if not reply.get("died"):
                        break
                reply["attempts"] = attempt + 1
                with lock:
                    on_done(key, reply)

        threads = [threading.Thread(target=serve, args=(slot,), daemon=True) for slot in self.slots]
        for thread in threads:
            thread.start()
        try:
            for item in _then(requests, [stop] * len(threads)):
                while True:  # a timed put: Ctrl-C reaches this thread while the queue is full
                    try:
                        todo.put(item, timeout=0.2)
                        break
                    except queue.Full:
                        if not any(t.is_alive() for t in threads):
                            return
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.2)
        except BaseException:
            self.cancelled.set()
            for slot in self.slots:
                slot.kill()
            raise

    def close(self) -> None:
        for slot in self.slots:
            slot.stop()
