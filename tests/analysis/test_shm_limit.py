"""bench/shm_limit.py's cross-core bound (--bound), without running anything (pure Python, well under
a second): the rates it reads from bench/cross_core_copy's output, the interpolation between the
sizes measured, and which bytes of each op cross between the cores on a call's critical path."""
from __future__ import annotations

import importlib.util
import subprocess

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("shm_limit", ROOT / "bench" / "shm_limit.py")
shm_limit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shm_limit)

# The first and third tables of bench/cross_core_copy, as it prints them (the others skipped).
CROSS_CORE_COPY = """cpu 0 writes, cpu 1 copies; median GB/s of the copy
     bytes        local       remote    ratio
      1024        13.30         2.00    0.150
      4096        38.28         4.00    0.104

cpu 0 rewrites what cpu 1 copied; median us of the rewrite and of the whole round
     bytes       shared      claimed    ratio   round shared  round claimed    ratio
     16384         1.12         2.10    0.533           4.73           5.07    0.933

the remote copy with what either core can add; median GB/s of the reader's copy (cldemote: a no-op here)
     bytes       remote     cldemote  prefetch 4K kernel, cached
      1024         3.56         7.16         3.62           1.00
      4096         5.85        16.06         5.65           8.00

whole rounds, cpu 0's copy in and cpu 1's copy out; median us by the writer's stores
"""
RATES = {"remote": {1024: 2.0, 4096: 4.0}, "kernel": {1024: 1.0, 4096: 8.0}}


def test_reads_the_remote_and_kernel_columns(monkeypatch):
    def run(cmd, **kw):
        assert cmd[0].endswith("cross_core_copy")
        return subprocess.CompletedProcess(cmd, 0, stdout=CROSS_CORE_COPY)
    monkeypatch.setattr(shm_limit.subprocess, "run", run)
    assert shm_limit.cross_rates("build") == RATES


@pytest.mark.parametrize("nbytes, rate", [(512, 2.0), (1024, 2.0), (2048, 3.0), (4096, 4.0), (1 << 20, 4.0)])
def test_rate_is_log_linear_between_sizes_and_flat_outside(nbytes, rate):
    assert shm_limit.rate_at(RATES["remote"], nbytes) == pytest.approx(rate)


@pytest.mark.parametrize(
    "op, nbytes, kernel, parts",
    [
        ("allgather", 4096, False, [2048]),              # the peer's block: half the recv
        ("broadcast", 4096, False, [4096]),              # the message
        ("reduce_scatter", 4096, False, [4096]),         # the block (nbytes is the recv)
        ("allreduce", 4096, False, [4096]),              # below SMALL: the peer's whole input
        ("reduce", 4096, False, [4096]),
        ("allreduce", 32768, False, [16384, 16384]),     # the peer's half, then its reduced half
        ("reduce", 32768, True, [16384, 16384]),         # the same by the kernel
    ],
)
def test_crossing_parts_by_op(op, nbytes, kernel, parts):
    h = 0.25
    table = RATES["kernel" if kernel else "remote"]
    want = 2 * h + sum(x / (shm_limit.rate_at(table, x) * 1e3) for x in parts)
    assert shm_limit.crossing_us(op, nbytes, kernel, h, RATES) == pytest.approx(want)


def test_the_kernels_rate_prices_a_call_that_read_by_the_kernel():
    # 2 KiB at the remote rate (3 GB/s) against the kernel's (log-linear 1 -> 8 GB/s: 4.5)
    assert shm_limit.crossing_us("allgather", 4096, False, 0, RATES) == pytest.approx(2048 / 3e3)
    assert shm_limit.crossing_us("allgather", 4096, True, 0, RATES) == pytest.approx(2048 / 4.5e3)
