"""A log truncated (rotated by copytruncate) while ``summary`` reads it: every range is read with
``pread`` into memory of its own (no mapping whose pages can vanish), so a shorter file gives a
shorter read, counted as far as it goes, and no signal handler is installed. The scanner runs in
a child process: had it touched vanished pages, the child would die (signal 7) and the test
fail instead of the test run."""

from __future__ import annotations

from _cli_util import run_cli

from tui.core.formats import fastscan

CHILD = r"""
import os, signal, sys
from tui.core.formats import fastscan
from tui.core.pipeline import ranges as th
path = sys.argv[1]
line = b"[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 1, #token: 1, token usage: 0.01, accept len: 2.00, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0\n"
with open(path, "wb") as f:
    f.write(line * 40000)
size = os.path.getsize(path)
fd = os.open(path, os.O_RDONLY)
out = ["native:" + str(fastscan.native_scanner())]
os.truncate(path, len(line) * 100 + 7)  # the file now ends inside its 101st line
# a range the file now ends before: nothing there
out.append("beyond:" + str(len(th.scan_range(fd, len(line) * 200, size, 2026))))
# a range the file now ends inside: its whole lines read, the cut one given a newline
parts = th.scan_range(fd, 0, size // 2, 2026)
out.append("cut:" + str(sum(p.scan.lines for p in parts if p.scan is not None)))
out.append("records:" + str(sum(r.n for p in parts if p.scan is not None for r in p.scan.runs)))
# a range cut by a truncation and then written again: the part there now is read
with open(path, "wb") as f:
    f.write(line * 40000)
parts = th.scan_range(fd, 0, size // 2, 2026)
out.append("whole:" + str(sum(r.n for p in parts if p.scan is not None for r in p.scan.runs)))
caught = int(next(x for x in open("/proc/self/status") if x.startswith("SigCgt:")).split()[1], 16)
out.append("sigbus:" + ("handled" if caught >> (signal.SIGBUS - 1) & 1 else "default"))
print(" ".join(out))
"""


def test_a_range_of_a_truncated_file_is_read_as_far_as_it_goes(tmp_path):
    proc = run_cli(str(tmp_path / "rotated.log"), python=("-c", CHILD))
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    words = dict(w.split(":") for w in proc.stdout.split())
    assert words["native"] == str(fastscan.native_scanner())
    assert words["beyond"] == "0"
    assert words["cut"] == "101"  # 100 whole lines and the cut one
    assert words["records"] == "100"  # the cut one is no record
    assert words["whole"] == "20000"  # the first half of the rewritten file, every line read
    assert words["sigbus"] == "default"  # no signal handler installed (read from /proc/self/status)
