"""What runs on the remote host, and how its output is read back (the scripts themselves and the
commands that start them are in :mod:`.scripts`).

Everything is POSIX ``sh`` plus GNU coreutils (``tail``, ``stat``, ``head``, ``wc``): nothing is
installed or written on the host. Each script is a constant text; the user's path reaches it
only as a positional argument, quoted with :func:`shlex.quote`, so no part of a path is ever
parsed as shell code (only the last component of a glob is expanded, as a pattern, never
evaluated).

**Reader** (one channel per file being read)::

    TAG H ok DEV:INO:BIRTH SIZE START LINE_NO  header: the file opened, where reading starts
    TAG H err KIND [DETAIL]                    or why it could not be opened (``moved``: in
                                               mode verify, not the file read to OFFSET)
    <bytes of the file from START, as tail writes them>
    TAG S\\n<stat lines>\\nTAG E\\n               status, every interval: the name's identity
                                               and size, and the file tail really has open
    TAG X                                      tail ended

``tail`` writes its own messages (``file truncated``) into the same pipe (``2>&1``), so they are
exactly in order with the data. It is given a path with a random run of ``./`` segments (the
*nonce*) so its messages can be told apart from log text; status records carry a random *tag*.
Status records are single ``printf`` writes shorter than ``PIPE_BUF``, so they land whole
(possibly between two halves of a large data write, which :class:`ReaderDemux` handles).

A file's identity is ``DEV:INO:BIRTH`` (``stat``'s ``%d:%i:%.9W``): its birth time (ns; the same
"0" for every file where the host's ``stat`` or file system does not know it) tells apart a new
file on an inode freed a moment before, which happens within one rotation (logrotate compresses
``NAME.2`` and deletes it; the next ``NAME`` may get its inode) and would otherwise be read as
the older generation.

**Probe** (after ``moved``): the name's entry and checksums, and the entry and checksums of the
file with the old identity if it is still in the directory; **copies**: the same for files named
``NAME?*`` (where a copy-truncated file's old bytes may be).

**Lister** (glob sources): prints ``TAG S``/``TAG E`` blocks of ``stat`` lines of the matches of
``DIR/PATTERN`` every interval (once with ``once=1``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tui.core.sources.target import has_magic

# -- paths --------------------------------------------------------------------------------------


class RemotePathError(ValueError):
    """A remote path or pattern that cannot be used (one-line message)."""


@dataclass(frozen=True, slots=True)
class RemotePath:
    """``dir`` ("." is the login directory) and ``base`` (a name, or a pattern for globs)."""

    text: str
    dir: str
    base: str
    glob: bool

    def join(self, name: str) -> str:
        """The path of ``name`` (a match in ``dir``) as the user wrote the directory."""
        head = os.path.dirname(self.text)
        return f"{head}/{name}" if head else name


_GLOB_FORBIDDEN = set("\\\n\r\0/")


def parse_remote_path(text: str) -> RemotePath:
    """Checks a remote path (or glob) before anything reaches a shell.

    ``~/x`` and relative paths are relative to the login directory, as for scp. Only the last
    component of a glob may hold ``* ? [ ]``; backslashes and control characters are refused
    in patterns, newlines and NULs anywhere.
    """
    if not text:
        raise RemotePathError("empty remote path")
    if "\0" in text or "\n" in text or "\r" in text:
        raise RemotePathError("a remote path cannot contain a newline or NUL")
    path = text
    if path == "~" or path.endswith("/"):
        raise RemotePathError(
            f"{text} is a directory (give a file, or a pattern such as {text.rstrip('/')}/*.log)"
        )
    if path.startswith("~/"):
        path = path[2:]
    elif path.startswith("~"):
        raise RemotePathError(f"{text}: ~user paths are not supported; give the full path")
    d, base = os.path.split(path)
    if base in ("", ".", ".."):
        raise RemotePathError(f"{text} is a directory, not a log file")
    if has_magic(d):
        raise RemotePathError(
            f"{text}: only the last path component may contain * ? [ ] "
            "(a glob follows the newest match in one directory)"
        )
    glob = has_magic(base)
    if glob:
        bad = sorted(c for c in set(base) if c in _GLOB_FORBIDDEN or ord(c) < 32)
        if bad:
            raise RemotePathError(f"{text}: {bad[0]!r} is not allowed in a remote pattern")
        _check_brackets(text, base)
    return RemotePath(text, d or ".", base, glob)


def _check_brackets(text: str, pattern: str) -> None:
    i = 0
    while i < len(pattern):
        if pattern[i] == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] in "!^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            k = pattern.find("]", j)
            if k < 0:
                raise RemotePathError(f"{text}: unclosed [ in the pattern")
            i = k + 1
        elif pattern[i] == "]":
            raise RemotePathError(f"{text}: ] without [ in the pattern")
        else:
            i += 1


# -- reading it back ---------------------------------------------------------------------------


@dataclass(slots=True)
class Entry:
    """One ``stat`` line: kind (``regular file``, ...), identity, size, mtime, name."""

    kind: str
    identity: str
    size: int
    mtime: float
    name: str

    @property
    def regular(self) -> bool:
        return self.kind.startswith("regular")


def parse_entries(block: bytes, with_mtime: bool) -> list[Entry]:
    out = []
    for raw in block.split(b"\n"):
        parts = raw.decode("utf-8", "surrogateescape").split("|", 4 if with_mtime else 3)
        if len(parts) < (5 if with_mtime else 4):
            continue
        try:
            size = int(parts[2])
            mtime = float(parts[3]) if with_mtime else 0.0
        except ValueError:
            continue
        out.append(Entry(parts[0], parts[1], size, mtime, parts[-1]))
    return out


@dataclass(slots=True)
class Status:
    """A reader status record: the name's entry (None: gone) and the file tail has open."""

    name: Entry | None
    open: Entry | None


def parse_status(block: bytes) -> Status:
    name = opened = None
    for e in parse_entries(block, False):
        if e.name.startswith("/proc/"):
            if e.regular and opened is None:
                opened = e
        elif name is None:
            name = e
    return Status(name, opened)


_TAIL = b"tail: "
_HOLD_MAX = 1 << 16


class ReaderDemux:
    """Splits a reader channel's stdout into data, header, status, tail messages and the end.

    ``feed`` returns a list of ``(kind, value)``: ``("header", [fields])``, ``("data", bytes)``,
    ``("status", Status)``, ``("tail", message)``, ``("exit", None)``. Bytes that might be the
    start of a record or message are held until the next chunk decides.
    """

    def __init__(self, tag: str, nonce: str) -> None:
        self.tag = tag.encode()
        self.nonce = nonce.encode()
        self.pending = b""
        self.header_seen = False

    def feed(self, chunk: bytes) -> list[tuple[str, object]]:
        data = self.pending + chunk if self.pending else chunk
        self.pending = b""
        out: list[tuple[str, object]] = []
        pos = 0
        n = len(data)
        while pos < n:
            if not self.header_seen:
                nl = data.find(b"\n", pos)
                if nl < 0:
                    self.pending = data[pos:]
                    return out
                line = data[pos:nl]
                pos = nl + 1
                if line.startswith(self.tag + b" H "):
                    self.header_seen = True
                    out.append(("header", line[len(self.tag) + 3 :].decode("utf-8", "replace").split()))
                continue  # anything before the header (a login banner from the rc files) is dropped
            i = data.find(self.tag, pos)
            j = data.find(_TAIL, pos)
            k = min(x for x in (i, j, n) if x >= 0)
            if k > pos:
                out.append(("data", data[pos:k]))
                pos = k
            if k == n:
                break
            if k == i:
                end = self._record(data, i, out)
            else:
                end = self._message(data, j, out)
            if end is None:  # incomplete: wait for more
                if n - pos > _HOLD_MAX:  # cannot be ours: it is data
                    out.append(("data", data[pos : pos + 1]))
                    pos += 1
                    continue
                self.pending = data[pos:]
                return out
            pos = end
        # hold a tail that may be the start of a tag or of "tail: "
        if out and out[-1][0] == "data":
            last = out[-1][1]
            assert isinstance(last, bytes)
            keep = _prefix_overlap(last, (self.tag, _TAIL))
            if keep:
                self.pending = last[-keep:]
                if keep == len(last):
                    out.pop()
                else:
                    out[-1] = ("data", last[:-keep])
        return out

    def _record(self, data: bytes, i: int, out: list) -> int | None:
        t = self.tag
        after = i + len(t)
        if len(data) < after + 2:
            return None
        kind = data[after + 1 : after + 2]
        if kind == b"S":
            end_mark = b"\n" + t + b" E\n"
            e = data.find(end_mark, after)
            if e < 0:
                return None
            body = data[after + 3 : e]
            out.append(("status", parse_status(body)))
            return e + len(end_mark)
        nl = data.find(b"\n", after)
        if nl < 0:
            return None
        if kind == b"X":
            out.append(("exit", None))
        return nl + 1

    def _message(self, data: bytes, j: int, out: list) -> int | None:
        need = 3 + len(self.nonce)
        avail = data[j + len(_TAIL) : j + len(_TAIL) + need]
        ours = avail.startswith(b"inotify") or self.nonce in avail
        if not ours:
            if len(avail) < need and self._may_become_ours(avail):
                return None
            out.append(("data", _TAIL))
            return j + len(_TAIL)
        nl = data.find(b"\n", j)
        if nl < 0:
            return None
        out.append(("tail", data[j:nl].decode("utf-8", "replace")))
        return nl + 1

    def _may_become_ours(self, avail: bytes) -> bool:
        if b"inotify".startswith(avail[:7]):
            return True
        rest = avail
        for _ in range(3):
            if self.nonce.startswith(rest[: len(self.nonce)]):
                return True
            if not rest or rest[:1] not in (b"'", b'"', b"$"):
                return False
            rest = rest[1:]
        return False


def _prefix_overlap(data: bytes, marks: tuple[bytes, ...]) -> int:
    """Length of the longest end of ``data`` that is a proper start of one of ``marks``."""
    if not data or all(data[-1] not in m for m in marks):  # the usual case: a chunk ends with a newline
        return 0
    best = 0
    for m in marks:
        for k in range(min(len(m) - 1, len(data)), best, -1):
            if data.endswith(m[:k]):
                best = k
                break
    return best


def describe_tail_message(msg: str, nonce: str) -> tuple[str, str]:
    """("truncated" | "other", the message with the nonce path made readable)."""
    readable = msg.replace(nonce, "")
    if msg.endswith(": file truncated"):
        return "truncated", readable
    return "other", readable


@dataclass(slots=True)
class ProbeReport:
    """What :data:`.scripts.PROBE` found: the name's entry and checksums, the old file's and its."""

    name: Entry | None = None
    old: Entry | None = None
    sums: dict[str, dict[tuple[int, int], tuple[int, int]]] = field(default_factory=dict)
    complete: bool = False
    copies: list[Entry] = field(default_factory=list)  # COPIES: sums under "k0", "k1", ...


def parse_probe(out: bytes, tag: str) -> ProbeReport:
    """Parses :data:`.scripts.PROBE`'s output (lines before the first tagged one, a login banner, are
    ignored); ``complete`` is False when its end mark never came."""
    probe = ProbeReport()
    mark = tag.encode() + b" P "
    for raw in out.split(b"\n"):
        if not raw.startswith(mark):
            continue
        kind, _, rest = raw[len(mark) :].partition(b" ")
        if kind == b"E":
            probe.complete = True
        elif kind in (b"N", b"O", b"K"):
            entries = parse_entries(rest, False) if kind == b"N" else _old_entry(rest)
            if entries:
                if kind == b"N":
                    probe.name = entries[0]
                elif kind == b"O":
                    probe.old = entries[0]
                else:
                    probe.copies.append(entries[0])
        elif kind == b"C":
            f = rest.decode("ascii", "replace").split()
            if len(f) >= 5 and all(x.isdigit() for x in f[1:5]):
                probe.sums.setdefault(f[0], {})[(int(f[1]), int(f[2]))] = (int(f[3]), int(f[4]))
    return probe


def _old_entry(rest: bytes) -> list[Entry]:
    parts = rest.decode("utf-8", "surrogateescape").split("|", 3)
    if len(parts) < 4 or not parts[2].isdigit():
        return []
    name = parts[3][2:] if parts[3].startswith("./") else parts[3]
    return [Entry(parts[0], parts[1], int(parts[2]), 0.0, name)]


def parse_set(
    out: bytes, tag: str
) -> tuple[list[Entry], dict[str, dict[tuple[int, int], tuple[int, int]]], bool]:
    """Parses :data:`.scripts.SET`'s output: the set's files (with their mtimes), the checksums
    by identity, and whether its end mark came."""
    entries: list[Entry] = []
    sums: dict[str, dict[tuple[int, int], tuple[int, int]]] = {}
    complete = False
    mark = tag.encode() + b" P "
    for raw in out.split(b"\n"):
        if not raw.startswith(mark):
            continue
        kind, _, rest = raw[len(mark) :].partition(b" ")
        if kind == b"E":
            complete = True
        elif kind == b"K":
            for e in parse_entries(rest, True):
                e.name = e.name[2:] if e.name.startswith("./") else e.name
                entries.append(e)
        elif kind == b"C":
            f = rest.decode("ascii", "replace").split()
            if len(f) >= 5 and all(x.isdigit() for x in f[1:5]):
                sums.setdefault(f[0], {})[(int(f[1]), int(f[2]))] = (int(f[3]), int(f[4]))
    return entries, sums, complete
