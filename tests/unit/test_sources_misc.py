"""Line splitting, start positions, stdin/pipes, commands, source texts, the config file and
running several sources at once."""

from __future__ import annotations

import os

import pytest
from _hypothesis_util import examples
from _sources_util import FAST, Collector, append, seq, seq_lines
from _wait import wait_until_async
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.config.settings import ConfigError, default_config_path, load_settings, parse_settings
from tui.core.sources import kinds
from tui.core.sources.base import MAX_LINE_BYTES
from tui.core.sources.base import EventKind as K
from tui.core.sources.command import CommandSource
from tui.core.sources.file import FileSource
from tui.core.sources.lines import (
    END,
    LineSplitter,
    StartAt,
    find_start,
    oversized_bytes,
    oversized_line,
    parse_start,
)
from tui.core.sources.merge import merged
from tui.core.sources.spec import (
    SourceSpecError,
    SshTarget,
    expand_source_args,
    open_source,
    parse_source_spec,
)
from tui.core.sources.stdin import PipeSource

# -- the splitter ---------------------------------------------------------------------------------


def reference(data: bytes) -> list[tuple[int, str]]:
    """(offset, text) of each line, the slow obvious way."""
    out, off = [], 0
    parts = data.split(b"\n")
    for i, p in enumerate(parts):
        if i == len(parts) - 1 and not p:
            break
        text = (
            oversized_line(len(p))
            if len(p) > MAX_LINE_BYTES
            else p.decode("utf-8", "replace").removesuffix("\r")
        )
        out.append((off, text))
        off += len(p) + 1
    return out


def split_all(data: bytes, sizes: list[int]) -> list[tuple[int, int, str]]:
    sp, got, i, k = LineSplitter(), [], 0, 0
    while i < len(data):
        n = sizes[k % len(sizes)] if sizes else len(data)
        k += 1
        lines, offs, first = sp.feed(data[i : i + n])
        i += n
        assert first == len(got) + 1
        got += [(first + j, o, t) for j, (o, t) in enumerate(zip(offs, lines))]
    lines, offs, first = sp.flush()
    got += [(first + j, o, t) for j, (o, t) in enumerate(zip(offs, lines))]
    return got


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(
        st.binary(max_size=12).map(lambda b: b.replace(b"\n", b""))
        | st.sampled_from([b"", b"\r", b"abc\r", b"\xff\xfe", "é€".encode(), b"\xe2\x82"]),
        max_size=20,
    ),
    st.booleans(),
    st.lists(st.integers(1, 40), min_size=1, max_size=5),
)
def test_splitter_matches_a_plain_split_for_any_chunking(pieces, final_nl, sizes):
    data = b"\n".join(pieces) + (b"\n" if final_nl else b"")
    got = split_all(data, sizes)
    assert [(o, t) for _, o, t in got] == reference(data)
    assert [no for no, _, _ in got] == list(range(1, len(got) + 1))


def test_crlf_invalid_utf8_and_partial_line():
    data = b"a\r\nb\xff\xfec\r\n\xe2\x82\xacok\r\nlast\r"
    assert split_all(data, [3]) == [(1, 0, "a"), (2, 3, "b\ufffd\ufffdc"), (3, 9, "€ok"), (4, 16, "last")]


@pytest.mark.parametrize("chunk", [1 << 16, 1 << 20, 4 << 20, 16 << 20])
def test_a_3_mib_line_stands_in_as_oversized_with_its_length(chunk):
    big = "é" * (3 * MAX_LINE_BYTES // 2)  # 3 MiB of two-byte characters
    data = b"before\n" + big.encode() + b"\nafter\n"
    got = split_all(data, [chunk])
    assert [no for no, _, _ in got] == [1, 2, 3]
    assert got[0][2] == "before" and got[2] == (3, len(data) - 6, "after")
    assert got[1] == (2, 7, oversized_line(3 * MAX_LINE_BYTES)) and oversized_bytes(got[1][2]) == 3 << 20


def test_an_oversized_last_line_without_newline_counts_at_flush():
    got = split_all(b"a\n" + b"z" * (MAX_LINE_BYTES + 5), [1 << 16])
    assert got == [(1, 0, "a"), (2, 2, oversized_line(MAX_LINE_BYTES + 5))]


def test_splitter_memory_stays_bounded_on_a_line_without_end():
    sp = LineSplitter()
    for _ in range(40):  # 10 MiB without a newline
        sp.feed(b"x" * (256 * 1024))
        assert sp.pending <= MAX_LINE_BYTES + 256 * 1024


async def test_file_source_reports_a_3_mib_line_as_oversized(tmp_path):
    p = tmp_path / "big.log"
    p.write_bytes(b"a\n" + b"y" * (3 << 20) + b"\nb\n")
    async with Collector(FileSource(str(p), follow=False, **FAST)) as c:
        await c.wait_for(lambda c: c.done)
    assert c.lines == ["a", oversized_line(3 << 20), "b"]
    assert c.numbered[2][:2] == (3, 2 + (3 << 20) + 1)


# -- start positions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content,start,expect",
    [
        (b"a\nb\nc\n", "end", 6),
        (b"a\nb\nc", "end", 4),
        (b"a\nb\nc\n", "-2", 2),
        (b"a\nb\nc", "-1", 4),
        (b"a\nb\nc\n", "-9", 0),
        (b"a\nb\nc\n", "start", 0),
        (b"", "-3", 0),
        (b"a\nb\nc\n", "-0", 6),
    ],
)
def test_find_start(tmp_path, content, start, expect):
    p = tmp_path / "f"
    p.write_bytes(content)
    fd = os.open(p, os.O_RDONLY)
    try:
        assert find_start(fd, len(content), parse_start(start)) == expect
    finally:
        os.close(fd)


def test_find_start_over_many_blocks(tmp_path):
    p = tmp_path / "f"
    p.write_text(seq_lines(1, 50_000))
    fd = os.open(p, os.O_RDONLY)
    try:
        off = find_start(fd, p.stat().st_size, StartAt("last", 30_000))
    finally:
        os.close(fd)
    assert p.read_bytes()[off:].startswith(seq(20_001).encode() + b"\n")


def test_parse_start_rejects_nonsense():
    assert parse_start("-5") == StartAt("last", 5) and str(parse_start("END")) == "end"
    with pytest.raises(ValueError, match="start, end or -N"):
        parse_start("5")


# -- stdin / pipes ------------------------------------------------------------------------------------


async def test_pipe_source_reads_to_eof_with_the_partial_last_line():
    r, w = os.pipe()
    src = PipeSource(r, "stdin", idle_after=None, close_fd=True)
    async with Collector(src) as c:
        await c.wait_event(K.OPENED)
        os.write(w, seq_lines(1, 2).encode() + b"line 0")
        await c.wait_lines(2)
        os.write(w, b"0003\r\nno newline at the end")
        os.close(w)
        await c.wait_for(lambda c: c.done)
    assert c.stream() == ["<opened>"] + [seq(1), seq(2), seq(3), "no newline at the end", "<eof>"]


async def test_pipe_source_says_idle():
    r, w = os.pipe()
    async with Collector(PipeSource(r, "stdin", idle_after=0.1, close_fd=True)) as c:
        await c.wait_event(K.IDLE)
        os.write(w, b"x\n")
        await c.wait_lines(1)
        os.close(w)
        await c.wait_for(lambda c: c.done)
    assert c.stream() == ["<opened>", "<idle>", "x", "<eof>"]


# -- commands ---------------------------------------------------------------------------------------


async def test_command_stdout_lines_stderr_events_and_exit():
    src = CommandSource(
        f"printf '{seq_lines(1, 3)}'; echo 'oops' >&2; sleep 0.05; printf 'tail'; exit 3", idle_after=None
    )
    async with Collector(src) as c:
        await c.wait_for(lambda c: c.done)
    assert c.lines == [seq(1), seq(2), seq(3), "tail"]
    assert c.kinds == [K.OPENED, K.STDERR, K.EXITED]
    assert c.events[1].data["lines"] == ["oops"]
    assert c.events[2].data["returncode"] == 3 and "exited with status 3" in src.error


async def test_command_not_found_is_explained():
    src = CommandSource("specwatch-no-such-command-xyz", idle_after=None)
    async with Collector(src) as c:
        await c.wait_for(lambda c: c.done)
    assert c.events[-1].kind == K.EXITED and "127 (command not found)" in c.events[-1].message


async def test_closing_a_command_stops_its_process_group(tmp_path):
    marker = tmp_path / "pid"
    src = CommandSource(f"sleep 30 & echo $! > {marker}; echo started; wait", idle_after=None)
    async with Collector(src) as c:
        await c.wait_lines(1)
        child = int(marker.read_text())
    await wait_until_async(lambda: not _alive(child), what="the command's child to end")


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for a reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# -- source texts -------------------------------------------------------------------------------


def test_source_texts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run:1.log").write_text("x\n")
    (tmp_path / "a=b.log").write_text("x\n")
    (tmp_path / "logs").mkdir()
    cases = {
        "a.log": ("file", "a.log", None, "a.log"),
        "before=a.log": ("file", "a.log", "before", "before"),
        "-": ("stdin", "-", None, "stdin"),
        "x=-": ("stdin", "-", "x", "x"),
        "cmd:kubectl logs -f x=1": ("command", "kubectl logs -f x=1", None, "cmd:kubectl logs -f x=1"),
        "k=cmd:docker logs -f c 2>&1": ("command", "docker logs -f c 2>&1", "k", "k"),
        "/data/logs/*.log": ("glob", "/data/logs/*.log", None, "/data/logs/*.log"),
        "run:1.log": ("file", "run:1.log", None, "run:1.log"),  # exists: local, not SSH
        "a=b.log": ("file", "a=b.log", None, "a=b.log"),  # exists: no label
    }
    for text, (kind, target, label, name) in cases.items():
        s = parse_source_spec(text)
        assert (s.kind, s.target, s.label, s.name) == (kind, target, label, name), text
    for text, msg in (
        ("", "empty source"),
        ("cmd:", "needs a command"),
        ("logs", "is a directory"),
        ("foo://h/metrics", "foo:// sources are not supported"),
    ):
        with pytest.raises(SourceSpecError, match=msg):
            parse_source_spec(text)


SSH_TEXTS = {
    "gpu1:/data/x.log": SshTarget("gpu1", "/data/x.log", None, None),
    "me@gpu1:/data/*.log": SshTarget("gpu1", "/data/*.log", "me", None),
    "ssh://me@gpu1:2222/data/x.log": SshTarget("gpu1", "/data/x.log", "me", 2222),
    "L=gpu1:logs/x.log": SshTarget("gpu1", "logs/x.log", None, None),
    "me@[::1]:/x.log": SshTarget("::1", "/x.log", "me", None),
}


def test_a_registered_kind_reads_its_scheme(monkeypatch):
    class Echo(kinds.SourceKind):
        name = "echo"
        schemes = ("echo",)

        def parse(self, probe):
            return self.spec(probe, probe.rest[len("echo://") :])

        def open(self, spec, *, follow, start, **options):
            return ("echo", spec.target, follow, options)

        def summarize(self, spec, label, options):
            raise kinds.SummaryError(f"{spec.text}: nothing to read whole")

    with pytest.raises(SourceSpecError, match="echo:// sources are not supported"):
        parse_source_spec("echo://hi")
    monkeypatch.setitem(kinds._BY_SCHEME, "echo", Echo())
    monkeypatch.setitem(kinds._BY_NAME, "echo", kinds._BY_SCHEME["echo"])
    s = parse_source_spec("L=echo://hi")
    assert (s.kind, s.target, s.name) == ("echo", "hi", "L")
    assert open_source(s, follow=False, idle_after=1) == ("echo", "hi", False, {"idle_after": 1})


def test_ssh_texts_go_to_the_ssh_kind(monkeypatch):
    opened = []
    monkeypatch.setattr(
        kinds.SshKind, "open", lambda self, spec, **kw: opened.append((spec, kw)) or "src", raising=True
    )
    for text, target in SSH_TEXTS.items():
        s = parse_source_spec(text)
        assert (s.kind, s.ssh, s.target) == ("ssh", target, target.path), text
    s = parse_source_spec("L=gpu1:logs/x.log")
    assert s.name == "L" and parse_source_spec("gpu1:/data/x.log").name == "gpu1:/data/x.log"
    assert open_source(s, follow=False, start=END, idle_after=5) == "src"
    assert opened == [(s, {"follow": False, "start": END, "idle_after": 5})]


def test_config_names_and_pairs(tmp_path):
    cfg = parse_settings(
        '[sources]\nbroken = "/l/broken.log"\nfixed = { source = "/l/*.log", label = "fixed cfg" }\n'
        '[pairs]\neagle3 = ["broken", "fixed"]\n'
    )
    s = parse_source_spec("broken", cfg)
    assert (s.kind, s.target, s.name, s.config_name) == ("file", "/l/broken.log", "broken", "broken")
    assert parse_source_spec("fixed", cfg).name == "fixed cfg"
    assert parse_source_spec("mine=fixed", cfg).name == "mine"
    assert [x.name for x in expand_source_args(["eagle3", "-"], cfg)] == ["broken", "fixed cfg", "stdin"]
    with pytest.raises(SourceSpecError, match="pair"):
        parse_source_spec("eagle3", cfg)
    with pytest.raises(SourceSpecError, match="only once"):
        expand_source_args(["-", "x=-"], cfg)


@pytest.mark.parametrize(
    "text,message",
    [
        (
            '[sources]\nfixed = { source = "a", lable = "x" }\n',
            "sources.fixed.lable: unknown key (did you mean 'label'?)",
        ),
        ('[soruces]\na = "x"\n', "soruces: unknown key (did you mean 'sources'?)"),
        (
            '[sources]\nfixed = "/f.log"\n[pairs]\nab = { a = "fixed", b = "fixd" }\n',
            "pairs.ab.b: 'fixd' is not a name in [sources] (did you mean 'fixed'?)",
        ),
        ('[pairs]\nab = ["x.log"]\n', "pairs.ab: a pair is two sources, [A, B]; got 1"),
        ('[sources]\n"a b" = "x"\n', "sources.'a b': not a usable name"),
        ('[sources]\na = { label = "x" }\n', "sources.a.source: required key is missing"),
        ("[sources]\nb = 5\n", "sources.b: expected a source text"),
        ("[sources\n", "not valid TOML"),
    ],
)
def test_config_errors_point_at_the_key(text, message):
    with pytest.raises(ConfigError) as e:
        parse_settings(text, "specwatch.toml")
    assert message in str(e.value) and str(e.value).startswith("specwatch.toml: ")


def test_config_discovery(tmp_path):
    xdg = tmp_path / "xdg"
    (xdg / "specwatch").mkdir(parents=True)
    (xdg / "specwatch" / "specwatch.toml").write_text('[sources]\na = "/x.log"\n')
    env = {"XDG_CONFIG_HOME": str(xdg), "HOME": str(tmp_path / "home")}
    assert default_config_path(env) == xdg / "specwatch" / "specwatch.toml"
    assert load_settings(env=env).sources["a"].source == "/x.log"
    env = {"HOME": str(tmp_path / "home")}
    assert load_settings(env=env).sources == {}  # no file: an empty config
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "nope.toml")


# -- several sources --------------------------------------------------------------------------------


async def test_merged_interleaves_by_arrival_and_reports_a_broken_source(tmp_path):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    append(a, "a1\n")
    append(b, "b1\n")
    sa = open_source(parse_source_spec(f"A={a}"), **FAST)
    sb = open_source(parse_source_spec(f"B={b}"), **FAST)

    class Raises:
        name = "broken"

        def __aiter__(self):
            return self._gen()

        async def _gen(self):
            raise RuntimeError("boom")
            yield  # pragma: no cover - makes this an async generator

        async def aclose(self):
            pass

    lines: list[tuple[int, str]] = []
    errors: list[tuple[int, str]] = []
    gen = merged([sa, sb, Raises()])
    async for i, batch in gen:
        if batch is not None and hasattr(batch, "lines"):
            lines.append((i, batch.lines[0]))
            if len(lines) == 2:
                append(b, "b2\n")
            if len(lines) == 3:
                append(a, "a2\n")
            if len(lines) == 4:
                break
        elif batch is not None and batch.kind == K.ERROR:
            errors.append((i, batch.message))
    await gen.aclose()
    assert errors == [(2, "internal error: RuntimeError: boom")]
    assert sorted(lines[:2]) == [(0, "a1"), (1, "b1")] and lines[2:] == [(1, "b2"), (0, "a2")]
