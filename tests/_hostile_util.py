"""The hostile-input corpus shared by test_hostile_input.py and test_hostile_app.py: every
control-sequence family (CSI, OSC with BEL and ST, DCS, APC, PM, SOS, SS2/SS3, single ``ESC x``,
8-bit C1), NUL and other C0 controls, bidi overrides, invalid UTF-8, nan / inf / 1e308 / negative
values, a 10 MB line and 50 MB of random bytes; and the CLI run in a child process."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from _cli_util import run_cli

from tui.core.model.sanitize import UNSAFE

ROOT = Path(__file__).resolve().parent.parent
ESC = "\x1b"

TITLE = "\x1b]2;pwned-title\x07"
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"  # "pwned" into the clipboard
CLEAR = "\x1b[2J\x1bc"
# One of each family a terminal acts on.
SEQUENCES = {
    "csi": "\x1b[31mred\x1b[0m\x1b[6n\x1b7\x1b[1;1H\x1b8",
    "osc_bel": TITLE,
    "osc_st": "\x1b]0;st-title\x1b\\",
    "osc52": CLIPBOARD,
    "dcs": "\x1bP1$r0m\x1b\\",
    "apc": "\x1b_apc\x1b\\",
    "pm": "\x1b^pm\x1b\\",
    "sos": "\x1bXsos\x1b\\",
    "ss2_ss3": "\x1bNa\x1bOb",
    "single": "\x1bc\x1b=\x1b>",
    "clear": CLEAR,
    "c1": "\x9b31m\x9d2;c1-title\x9c\x90dcs\x9c\x85",
    "c0": "nul\x00bel\x07bs\x08vt\x0bff\x0ccr\rdel\x7f",
    "bidi": "\u202eevil\u202c \u2066iso\u2069",
}
DRAFT = f"/models/draft{TITLE}{CLIPBOARD}{CLEAR}"


def server_args(draft: str) -> str:
    return (
        "[2026-11-20 09:00:01] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
        f"tp_size=1, speculative_algorithm='EAGLE3', speculative_draft_model_path='{draft}', "
        "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)"
    )


def decode(i: int, al: str = "2.50", prefix: str = "") -> str:
    return (
        f"[2026-11-20 09:01:{i % 60:02d}] {prefix}Decode batch, #running-req: 3, #token: 1200, token usage: 0.01, "
        f"accept len: {al}, accept rate: 0.40, cuda graph: True, gen throughput (token/s): 150.00, #queue-req: 0"
    )


def hostile_lines() -> list[str]:
    lines = [server_args(DRAFT)]
    for i, (name, seq) in enumerate(SEQUENCES.items()):
        lines.append(f"{name}: {seq} [bold]markup[/bold] [/oops]")
        lines.append(decode(i, prefix=seq))
    for i, al in enumerate(["nan", "inf", "-inf", "1e308", "-2.5", "1e200", "0"]):
        lines.append(decode(30 + i, al))
    lines += [decode(40 + i, f"2.{i}0") for i in range(10)]
    return lines


def write_hostile(path: Path, *, big: bool = False) -> Path:
    data = "\n".join(hostile_lines()).encode("utf-8", "surrogatepass") + b"\n"
    data += b"\xff\xfe\xc3\x28 invalid utf-8 \xe2\x82 Decode batch, accept len: \xf0\x9f\n"
    if big:
        data += b"Decode batch, accept len: 9.99, " + b"k: v, " * (10 * 1024 * 1024 // 6) + b"\n"  # 10 MB
        rnd = random.Random(7)
        data += rnd.randbytes(50 << 20) + b"\n"  # 50 MB of random bytes
        data += decode(59).encode() + b"\n"
    path.write_bytes(data)
    return path


def strings(obj) -> list[str]:
    """Every string value in a JSON document."""
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in strings(v)]
    return []


def unsafe_in(text: str) -> list[str]:
    return sorted({repr(ch) for ch in text if ch in UNSAFE and ch != "\n"})


def run_cli_peak(*args: str) -> tuple[subprocess.CompletedProcess, int]:
    """:func:`_cli_util.run_cli` (output as bytes), and the child's peak memory (KiB, workers not
    included)."""
    # VmHWM, not ru_maxrss: the latter keeps the high-water mark of the forked test process
    code = (
        "import sys\nfrom tui.cli import main\nrc = main(sys.argv[1:])\n"
        "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "sys.stderr.write(f'\\nMAXRSS={hwm}\\n')\n"
        "sys.exit(rc)\n"
    )
    r = run_cli(*args, python=("-c", code), text=False)
    err = r.stderr.decode("utf-8", "replace")
    rss = int(err.rsplit("MAXRSS=", 1)[1].split()[0])
    r.stderr = err.rsplit("\nMAXRSS=", 1)[0].encode()
    return r, rss


def forty_lines(path: Path) -> Path:
    path.write_text("\n".join(decode(i, "1e308" if i == 20 else f"2.{i % 10}0") for i in range(40)) + "\n")
    return path
