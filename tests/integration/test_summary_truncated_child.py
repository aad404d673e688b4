"""A file truncated while a child process reads it through a memory mapping: read again, not a
crash (the reader in a child process)."""

from __future__ import annotations

from _cli_util import run_cli

CHILD = r"""
import mmap, os, sys
from tui.core.formats import fastscan
from tui.core.pipeline import ranges as th
path = sys.argv[1]
line = b"[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 1, #token: 1, token usage: 0.01, accept len: 2.00, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0\n"
with open(path, "wb") as f:
    f.write(line * 40000)
size = os.path.getsize(path)
fd = os.open(path, os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
os.truncate(path, 4096)
out = []
for name, fn in [
    ("scan", lambda: fastscan.scan_chunk(m, 2026)),
    ("refused_at", lambda: fastscan.refused_at(m, 2026)),
    ("long_lines", lambda: fastscan.long_lines(m, 1 << 20)),
    ("line_end", lambda: fastscan.line_end(m, 10000)),
]:
    try:
        fn()
        out.append(name + ":read")
    except fastscan.FileChanged:
        out.append(name + ":changed")
m.close()
# a range mapped after the file shrank below it: read again with read(), nothing there
out.append("beyond:" + str(len(th.scan_range(fd, 8192, size, 2026))))
# a range cut by the truncation: the part still there is read
with open(path, "wb") as f:
    f.write(line * 40000)
parts = th.scan_range(fd, 0, size // 2, 2026)
out.append("whole:" + str(sum(p.scan.runs[0].n for p in parts if p.scan is not None)))
print(" ".join(out))
"""


def test_a_truncated_mapping_is_read_again_not_a_crash(tmp_path):
    proc = run_cli(str(tmp_path / "rotated.log"), python=("-c", CHILD))
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    words = proc.stdout.split()
    assert words[:4] == ["scan:changed", "refused_at:changed", "long_lines:changed", "line_end:changed"]
    assert words[4] == "beyond:0"
    half_lines = words[5].split(":")[1]
    assert int(half_lines) == 20000  # the first half of the rewritten file, every line read
