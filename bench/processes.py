"""Child processes of the benches: the simulated arm's own process (``sim_arm``), stopping a
child, a process's CPU time. Shared by end_to_end_latency, bridge_loop and sim_process_cpu."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import yaml

__all__ = ["process_cpu", "start_sim_arm", "stop_process"]

ROOT = pathlib.Path(__file__).resolve().parents[1]
_TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (``/proc/<pid>/stat``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def start_sim_arm(values: dict, params_file: pathlib.Path) -> tuple[subprocess.Popen, int]:
    """Start ``sim_arm`` (socketcand on 127.0.0.1, a free port) for the bridge parameters
    ``values`` (written to ``params_file``); returns (process, port) once it serves.

    Raises:
        RuntimeError: it exited or printed something else first (its output attached).
    """
    params_file.write_text(yaml.safe_dump({"mit_bridge": {"ros__parameters": values}}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "gravity_friction_comp.tools.sim_arm", "--params-file", str(params_file)]
        + ["--port", "0"],
        env=dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "sim_arm: serving 127.0.0.1:PORT (...)" once it listens
    if not line.startswith("sim_arm: serving"):
        stop_process(proc)
        raise RuntimeError(f"sim_arm did not start: {line}{proc.stdout.read()}")
    return proc, int(line.split()[2].rsplit(":", 1)[1])


def stop_process(proc: subprocess.Popen, timeout: float = 20.0) -> None:
    """SIGINT (a clean shutdown), then kill after ``timeout`` [s]; nothing if it has ended."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
