"""Hostile input: log text nobody controls, absurd values and huge lines, through every output.

The corpus holds every control-sequence family (CSI, OSC with BEL and ST, DCS, APC, PM, SOS,
SS2/SS3, single ``ESC x``, 8-bit C1), NUL and other C0 controls, bidi overrides, invalid UTF-8,
nan / inf / 1e308 / negative values, a 10 MB line and 50 MB of random bytes. Through ``summary``
(text and JSON), ``stream`` (text and JSONL) and the app (Pilot, and a real terminal in tmux):
no ESC byte (nor any other control a terminal obeys) in human-readable output, no crash,
bounded memory; JSON keeps the raw text.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from _ci import missing
from _tui_util import _isolated_config, screen_text, wait_ended, wait_for  # noqa: F401

from tui.app import SpecwatchApp
from tui.core.sanitize import UNSAFE, number, visible
from tui.launch import LaunchPlan, replay_pane
from tui.widgets.log_tail import LogTail

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
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


def run_cli(*args: str, timeout: float = 300) -> tuple[subprocess.CompletedProcess, int]:
    """The CLI in a child process; also its peak memory (KiB, workers not included)."""
    # VmHWM, not ru_maxrss: the latter keeps the high-water mark of the forked test process
    code = (
        "import sys\nfrom tui.cli import main\nrc = main(sys.argv[1:])\n"
        "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "sys.stderr.write(f'\\nMAXRSS={hwm}\\n')\n"
        "sys.exit(rc)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, timeout=timeout, env=ENV, cwd=ROOT
    )
    err = r.stderr.decode("utf-8", "replace")
    rss = int(err.rsplit("MAXRSS=", 1)[1].split()[0])
    r.stderr = err.rsplit("\nMAXRSS=", 1)[0].encode()
    return r, rss


# -- the sanitiser itself --------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_every_family_is_shown_not_obeyed(name):
    seq = SEQUENCES[name]
    out = visible(f"a {seq} b")
    assert not unsafe_in(out) and "\x1b" not in out
    assert out.startswith("a ") and out.endswith(" b")
    if "\x1b" in seq:
        assert "␛" in out  # visible, not silently dropped


def test_visible_keeps_text_and_markup_and_tab():
    s = "[2026-11-20 TP0] [bold]x[/bold]\tαβγ €"
    assert visible(s) is s
    assert visible("a\nb", keep_newlines=True) == "a\nb" and visible("a\nb") == "a␊b"
    assert visible("\x1b]2;t\x07") == "␛]2;t␇" and visible("\x9b2J") == "␛[2J"
    assert visible("\u202e") == "⟨U+202E⟩"


def test_numbers_never_print_absurd_digit_counts():
    for v in (1e200, -1e308, 1e9, 10**400):
        assert len(number(v)) <= 12, number(v)
    assert number(1e200) == "1.00e+200" and number(2.345) == "2.35" and number(-2.5, signed=True) == "-2.50"
    assert number(math.nan) == "nan" and number(math.inf, signed=True) == "+inf" and number(None) == "—"


# -- summary and stream ------------------------------------------------------------------------------
def test_summary_text_and_json(tmp_path):
    log = write_hostile(tmp_path / "hostile\x1b]2;name-title\x07.log")
    r, _ = run_cli("summary", str(log))
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 0, err
    assert not unsafe_in(out) and not unsafe_in(err)
    assert "␛]2;pwned-title␇" in out  # the draft path, shown
    assert "1.00e+308" in out or "e+30" in out  # max accept len, bounded
    r, _ = run_cli("summary", "--json", str(log))
    assert r.returncode == 0, r.stderr
    assert b"\x1b" not in r.stdout  # JSON escapes it...
    d = json.loads(r.stdout)["sources"][0]
    assert any(TITLE in v for v in strings(d["segments"]))  # ...and keeps the raw text
    assert d["source"] == str(log)


@pytest.mark.parametrize("jsonl", [False, True], ids=["text", "jsonl"])
def test_stream_no_follow(tmp_path, jsonl):
    log = write_hostile(tmp_path / "hostile\x1b]2;name-title\x07.log")
    r, _ = run_cli("stream", "--no-follow", *(["--jsonl"] if jsonl else []), str(tmp_path / "*.log"))
    out, err = r.stdout.decode("utf-8"), r.stderr.decode()
    assert r.returncode == 0, err
    assert "\x1b" not in out and not unsafe_in(err)
    if not jsonl:
        assert not unsafe_in(out)
        assert "hostile␛]2;name-title␇.log" in out and "accept_len=1.00e+308" in out
        return
    objs = [json.loads(line) for line in out.splitlines()]
    recs = [o for o in objs if o["kind"] == "record"]
    assert any(o["accept_len"] is None for o in recs)  # nan / inf: null, never a made-up number
    assert any(o["accept_len"] == 1e308 for o in recs) and any(o["accept_len"] == -2.5 for o in recs)
    raws = "".join(o.get("raw") or "" for o in objs)
    assert TITLE in raws and SEQUENCES["single"] in raws  # JSON keeps the raw text
    assert {o["path"] for o in objs if o.get("path")} == {str(log)}


def test_cli_error_messages_are_shown_not_obeyed(tmp_path):
    missing_file = tmp_path / f"gone{TITLE}.log"
    r, _ = run_cli("summary", str(missing_file))
    err = r.stderr.decode()
    assert r.returncode == 2 and "no such file" in err
    assert not unsafe_in(err) and "␛]2;pwned-title␇" in err
    r, _ = run_cli("stream", "--no-follow", str(missing_file))
    err = r.stderr.decode()
    assert r.returncode == 1 and not unsafe_in(err), err


def test_10mb_line_and_50mb_of_random_bytes_in_bounded_memory(tmp_path):
    log = write_hostile(tmp_path / "big.log", big=True)
    size = log.stat().st_size
    assert size > 60 << 20  # reading it whole would take the process past 100 MiB
    r, rss = run_cli("summary", "--json", str(log))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)["sources"][0]
    assert d["oversized"]["lines"] >= 1 and d["oversized"]["largest"] >= 10 << 20
    examples = {e["bytes"] for e in d["oversized"]["examples"]}
    assert len(b"Decode batch, accept len: 9.99, ") + 6 * (10 * 1024 * 1024 // 6) in examples
    assert 9.99 not in (d["accept_len"]["max"],)  # the 10 MB line was not parsed
    assert rss < 100 * 1024, f"summary peaked at {rss // 1024} MiB on a {size >> 20} MiB file"
    r, rss = run_cli("summary", str(log))
    assert r.returncode == 0 and not unsafe_in(r.stdout.decode()), r.stderr
    assert "oversized" in r.stdout.decode()
    for jsonl in (False, True):
        r, rss = run_cli("stream", "--no-follow", *(["--jsonl"] if jsonl else []), str(log))
        out = r.stdout.decode("utf-8")
        assert r.returncode == 0, r.stderr
        assert "\x1b" not in out and (jsonl or not unsafe_in(out))
        assert max(map(len, out.splitlines())) < 64 * 1024  # no line carries the 10 MB one
        assert rss < 100 * 1024, f"stream peaked at {rss // 1024} MiB on a {size >> 20} MiB file"
        if jsonl:
            over = [json.loads(x) for x in out.splitlines() if '"oversized"' in x]
            assert any(o["kind"] == "oversized" and o["bytes"] >= 10 << 20 for o in over)


# -- the app (Pilot) ------------------------------------------------------------------------------------
async def test_app_shows_hostile_text_and_absurd_values_without_obeying_or_crashing(tmp_path):
    log = write_hostile(tmp_path / f"h{TITLE}.log")
    plan = LaunchPlan([replay_pane(str(log), None, speed=None)], compare=False)
    app = SpecwatchApp(plan)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        app.notify(f"remote says {TITLE}{CLIPBOARD}", title=f"host{CLEAR}")
        await pilot.pause()
        for _ in range(3):  # the app keeps ticking over nan / inf / 1e308 values
            app.screen.tick()
            await pilot.pause(0.1)
        screen = screen_text(app)
        svg = app.export_screenshot()
        assert app.is_running and app.return_code is None
        assert not unsafe_in(svg), unsafe_in(svg)
        assert "␛]2;pwned-title␇" in screen  # the draft path / log text, shown
        assert not unsafe_in(app.title) and not unsafe_in(app.screen.title or "")
        assert all(not unsafe_in(n.message) and not unsafe_in(n.title) for n in app._notifications)
        tail = app.screen.query_one(LogTail)
        assert tail.shown and not any(unsafe_in(str(tail.query_one("TailView").render())) for _ in [0])
        await pilot.press("q")


# -- a real terminal (tmux) -----------------------------------------------------------------------------
class Tmux:
    """A private tmux server (its own socket) with ``set-clipboard on``."""

    def __init__(self, tmp: Path) -> None:
        self.sock = f"specwatch-h6-{uuid.uuid4().hex[:8]}"
        self.tmp = tmp

    def __call__(self, *args: str) -> str:
        r = subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True, timeout=10)
        return r.stdout

    def start(self, command: str) -> Path:
        exit_file = self.tmp / "exit"
        env = (
            f"cd {shlex.quote(str(self.tmp))} && unset COLUMNS LINES && "
            f"XDG_CONFIG_HOME={shlex.quote(str(self.tmp / 'xdg'))} PYTHONPATH={shlex.quote(str(ROOT))} "
            "TERM=xterm-256color"
        )
        script = f"{env} {command}; echo EXIT=$? > {shlex.quote(str(exit_file))}; sleep 60"
        subprocess.run(
            [
                "tmux",
                "-L",
                self.sock,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "160",
                "-y",
                "45",
            ],
            check=True,
            timeout=10,
        )
        self("set-option", "-g", "set-clipboard", "on")
        self("set-option", "-g", "allow-rename", "on")
        self("respawn-pane", "-k", "-t", "t", script)
        return exit_file

    def title(self) -> str:
        return self("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def buffers(self) -> str:
        return self("list-buffers")

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "t")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True, timeout=10)


@pytest.fixture
def tmux(tmp_path):
    if shutil.which("tmux") is None:
        missing("tmux is not installed")
    t = Tmux(tmp_path)
    yield t
    t.close()


def wait(cond, what: str, t: Tmux, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} never happened; the screen was:\n{t.screen()}")


def test_tmux_control_terminal_obeys_the_sequences(tmux):
    """The check below can fail: printed raw, these bytes do set the title and the clipboard."""
    raw = tmux.tmp / "raw.txt"
    raw.write_text(f"{TITLE}{CLIPBOARD}plain\n")
    tmux.start(f"cat {shlex.quote(str(raw))}")
    wait(lambda: tmux.title() == "pwned-title", "the raw OSC 2 title", tmux, timeout=10)
    wait(lambda: tmux.buffers() != "", "the raw OSC 52 clipboard write", tmux, timeout=10)


def test_tmux_app_keeps_title_and_clipboard(tmux):
    log = write_hostile(tmux.tmp / "hostile.log")
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "tui", str(log)])
    exit_file = tmux.start(cmd)
    wait(lambda: "hostile.log" in tmux.screen() and "records" in tmux.screen(), "the app's frame", tmux)
    before = tmux.title()
    time.sleep(2.0)  # the log tail and the segment labels are on screen by now
    screen = tmux.screen()
    assert "␛" in screen, screen  # the sequences are shown...
    assert tmux.title() == before and "pwned" not in tmux.title() and "title" not in tmux.title()
    assert tmux.buffers() == ""  # ...and the clipboard was never written
    assert "specwatch" in screen and "accept len" in screen  # the frame was never cleared
    tmux("send-keys", "-t", "t", "q")
    wait(lambda: exit_file.exists() and exit_file.read_text().strip(), "an exit after q", tmux)
    assert exit_file.read_text().strip() == "EXIT=0"
    assert tmux.title() == before and tmux.buffers() == ""


# -- absurd values: the 40-line log, the exporter -------------------------------------------------------
def forty_lines(path: Path) -> Path:
    path.write_text("\n".join(decode(i, "1e308" if i == 20 else f"2.{i % 10}0") for i in range(40)) + "\n")
    return path


def test_40_line_log_with_1e308_summary_exits_0(tmp_path):
    log = forty_lines(tmp_path / "one.log")
    for args in (["summary", str(log)], ["summary", "--json", str(log)]):
        r, _ = run_cli(*args)
        assert r.returncode == 0, r.stderr
        assert b"Traceback" not in r.stderr
        assert not re.search(rb"\d{20}", r.stdout)  # no 300-digit number
    assert "max 1.00e+308" in run_cli("summary", str(log))[0].stdout.decode()


async def test_40_line_log_with_1e308_the_app_keeps_running(tmp_path):
    log = forty_lines(tmp_path / "one.log")
    app = SpecwatchApp(LaunchPlan([replay_pane(str(log), None, speed=None)], compare=False))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        for _ in range(3):
            app.screen.tick()
            await pilot.pause(0.1)
        assert app.is_running and app.return_code is None
        text = screen_text(app)
        assert "specwatch" in text and "chart unavailable" not in text
        assert not re.search(r"\d{20}", text)  # no 300-digit number anywhere on screen
        await pilot.press("q")
    assert app.return_code == 0


def _followed(name: str, lines: list[str]):
    from tui.core.export_metrics import Exported
    from tui.core.follow import Followed
    from tui.core.sources.base import EventKind, LineBatch, SourceEvent

    st = Followed(name, track_arrivals=True)
    st.apply(SourceEvent(name, EventKind.OPENED, "opened"))
    st.apply(LineBatch(name, lines, list(range(len(lines))), 1))
    return Exported(st, "box1", "file", name)


def test_exporter_serves_absurd_values_and_isolates_a_failing_source(monkeypatch):
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import tui.core.export_metrics as em

    absurd = [decode(i, al) for i, al in enumerate(["1e308", "nan", "inf", "-2.5", "1e200"] * 8)]
    good = [decode(i, f"2.{i % 10}0") for i in range(40)]
    sources = [_followed("absurd", absurd), _followed("good", good), _followed("broken", good)]
    reg = CollectorRegistry()
    reg.register(em.SpecwatchCollector(sources))

    def scrape() -> dict[tuple[str, str], float]:
        out = {}
        for fam in text_string_to_metric_families(generate_latest(reg).decode()):
            for s in fam.samples:
                if s.name == "specwatch_source_export_error":
                    out[(s.name, s.labels["source"] + "/" + s.labels["error"])] = s.value
                elif "source" in s.labels and s.labels.get("rank", "all") == "all":
                    out[(s.name, s.labels["source"])] = s.value
        return out

    got = scrape()  # one scrape for all: values that overflow arithmetic never fail the others
    # the absurd source is served, or (while its statistics cannot hold such values) left out and
    # counted, never failing the scrape
    assert got.get(("specwatch_source_records_total", "absurd")) == 40 or (
        got[("specwatch_source_export_error", "absurd/OverflowError")] == 1
    )
    assert got[("specwatch_source_records_total", "good")] == 40
    assert got[("specwatch_accept_len_mean", "good")] == pytest.approx(
        sum(2 + (i % 10) / 10 for i in range(40)) / 40
    )

    real = em._metric_set

    def failing(f, lv, *args):
        if lv[0] == "broken":
            raise OverflowError("math range error")
        return real(f, lv, *args)

    monkeypatch.setattr(em, "_metric_set", failing)
    got = scrape()  # one source fails: the others are served, the failure is counted
    assert got[("specwatch_source_export_error", "broken/OverflowError")] == 1
    assert ("specwatch_source_records_total", "broken") not in got
    assert got[("specwatch_source_records_total", "good")] == 40
    assert got[("specwatch_source_records_total", "absurd")] == 40


async def test_compare_labels_with_markup_and_escapes_stay_literal(tmp_path):
    a = write_hostile(tmp_path / f"a{TITLE}.log")
    b = write_hostile(tmp_path / "b[bold]x.log")
    panes = [replay_pane(str(a), f"A[/oops]{TITLE}", speed=None), replay_pane(str(b), None, speed=None)]
    app = SpecwatchApp(LaunchPlan(panes, compare=True))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_ended(pilot)
        app.screen.tick()
        await pilot.pause()
        assert app.is_running and app.return_code is None
        text = screen_text(app)
        assert "A[/oops]␛]2;pwned-title␇" in text
        assert "b[bold]x.log" in text
        assert not unsafe_in(app.export_screenshot())
        await pilot.press("q")


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("chunk", [256 << 10, 8 << 20])
@pytest.mark.parametrize("kind", ["plain", "decode"])
def test_oversized_lines_count_in_every_summary_reader(tmp_path, monkeypatch, workers, chunk, kind):
    """Inside a chunk or across chunk ends, read in order or by workers: an oversized line is
    counted once with its length, the lines around it are read."""
    import tui.core.summary as summary

    monkeypatch.setattr(summary, "PARALLEL_MIN", 0)
    monkeypatch.setattr(summary, "CHUNK", chunk)
    from test_fastscan import make_log  # canonical lines: the fast scanner takes them

    good = make_log(3, 3000)
    if kind == "plain":  # no anchor: the fast scanner alone would take it for an ordinary line
        long = b"x" * (2 << 20)
    else:
        long = b"Decode batch, accept len: 9.0, " + b"k: v, " * (600 << 10)
    path = tmp_path / "o.log"
    path.write_bytes(good + long + b"\n" + good)
    plain = tmp_path / "plain.log"
    plain.write_bytes(good * 2)
    ref = summary.summarize_file(str(plain), workers=1).result()
    d = summary.summarize_file(str(path), workers=workers).result()
    assert d["lines"] == ref["lines"] + 1 and d["records"] == ref["records"]
    assert (
        d["accept_len"]["n"] == ref["accept_len"]["n"] and d["accept_len"]["max"] == ref["accept_len"]["max"]
    )
    assert d["oversized"]["lines"] == 1
    assert [(e["line"], e["bytes"]) for e in d["oversized"]["examples"]] == [(3001, len(long))]
