"""What runs on the remote host, and how its output is read back.

Everything is POSIX ``sh`` plus GNU coreutils (``tail``, ``stat``, ``head``, ``wc``): nothing is
installed or written on the host. Each script is a constant text; the user's path reaches it
only as a positional argument, quoted with :func:`shlex.quote`, so no part of a path is ever
parsed as shell code (only the last component of a glob is expanded, as a pattern, never
evaluated).

**Reader** (one channel per file being read)::

    TAG H ok DEV:INO SIZE START LINE_NO        header: the file opened, where reading starts
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

**Probe** (after ``moved``): the name's entry and checksums, and the entry and checksums of the
file with the old identity if it is still in the directory; **copies**: the same for files named
``NAME?*`` (where a copy-truncated file's old bytes may be).

**Lister** (glob sources): prints ``TAG S``/``TAG E`` blocks of ``stat`` lines of the matches of
``DIR/PATTERN`` every interval (once with ``once=1``).
"""

from __future__ import annotations

import os
import secrets
import shlex
from dataclasses import dataclass, field

from tui.core.sources.identity import cksum
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


# -- the scripts -------------------------------------------------------------------------------
# Kept on single logical lines joined by "; " so the outer quoting survives any login shell.

_PRELUDE = "LC_ALL=C; export LC_ALL; trap '' PIPE"

# end/last: the offset where the last N lines of bytes [0, SIZE) start (N=0: after the last
# newline), reading a window from the end that doubles until it holds enough newlines.
_LAST_START = (
    "last_start() { want=$1; e=$size; "
    'if [ "$want" -gt 0 ] && [ "$(tail -c +"$size" -- "$P" | head -c 1 | wc -l)" -eq 1 ]; then e=$((size - 1)); fi; '
    '[ "$want" -gt 0 ] || want=1; w=65536; '
    'while :; do lo=0; [ "$e" -gt "$w" ] && lo=$((e - w)); '
    'k=$(tail -c +$((lo + 1)) -- "$P" | head -c $((e - lo)) | wc -l); '
    'if [ "$k" -ge "$want" ] || [ "$lo" -eq 0 ]; then '
    'c=$( { tail -c +$((lo + 1)) -- "$P" | head -c $((e - lo)); echo; } | tail -n "$want" | wc -c); '
    "echo $((e + 1 - c)); return; fi; w=$((w * 2)); done; }"
)

READER = "; ".join(
    [
        _PRELUDE,
        "T=$1; S=$2; D=$3; B=$4; X=$5; O=$6; M=$7; N=$8; I=$9",
        'for c in tail stat head wc; do command -v "$c" >/dev/null 2>&1 || { printf \'%s H err notfound %s\\n\' "$T" "$c"; exit 127; }; done',
        'cd -- "$D" 2>/dev/null || { printf \'%s H err enoent\\n\' "$T"; exit 2; }',
        "P=./$B",
        '[ -e "$P" ] || { printf \'%s H err enoent\\n\' "$T"; exit 2; }',
        '[ -d "$P" ] && { printf \'%s H err isdir\\n\' "$T"; exit 2; }',
        '[ -r "$P" ] || { printf \'%s H err eacces\\n\' "$T"; exit 2; }',
        "st=$(stat -L -c '%d:%i %s %F' -- \"$P\" 2>/dev/null) || { printf '%s H err stat\\n' \"$T\"; exit 2; }",
        "id=${st%% *}; st=${st#* }; size=${st%% *}; kind=${st#* }",
        "case $kind in regular*) ;; *) printf '%s H err notregular\\n' \"$T\"; exit 2;; esac",
        _LAST_START,
        "start=0; ln=1",
        # verify: resume only if the cksums of the ranges ${11} are ${10}, else say "moved" (a probe follows)
        'case $M in resume) [ "$id" = "$X" ] && [ "$size" -ge "$O" ] && start=$O && ln=-;; '
        'verify) [ "$id" = "$X" ] && [ "$size" -ge "$O" ] || { printf \'%s H err moved\\n\' "$T"; exit 0; }; '
        "c=; for r in ${11}; do a=${r%:*}; l=${r#*:}; "
        'c="$c$(tail -c +$((a + 1)) -- "$P" 2>/dev/null | head -c "$l" | cksum 2>/dev/null) "; done; '
        '[ "$c" = "${10}" ] || { printf \'%s H err moved\\n\' "$T"; exit 0; }; start=$O; ln=-;; '
        'end) [ "$size" -gt 0 ] && start=$(last_start 0);; last) [ "$size" -gt 0 ] && start=$(last_start "$N");; esac',
        '[ "$start" -gt 0 ] && [ "$ln" = 1 ] && ln=$(( $(head -c "$start" -- "$P" | wc -l) + 1 ))',
        'printf \'%s H ok %s %s %s %s\\n\' "$T" "$id" "$size" "$start" "$ln"',
        '[ "$I" = 0 ] && exec tail -c +$((start + 1)) -- "$S$B" 2>&1',
        # GNU tail polls every 50 ms instead of writing each line as it lands: lines then leave the
        # host a few at a time (32 followed logs at 50 lines/s: half the client CPU, ~30 ms more
        # latency). Older or other tails without the option follow by inotify as usual.
        "F=---disable-inotify; tail $F -c 0 -- /dev/null >/dev/null 2>&1 || F=",
        'tail -c +$((start + 1)) -f $F -s 0.05 -- "$S$B" 2>&1 & p=$!; d=0.02',
        "while :; do sleep $d; "
        "r=$(stat -L -c '%F|%d:%i|%s|%n' -- \"$P\" /proc/$p/fd/* 2>/dev/null); "
        'printf \'%s S\\n%s\\n%s E\\n\' "$T" "$r" "$T" || break; '
        "kill -0 $p 2>/dev/null || { printf '%s X\\n' \"$T\"; break; }; "
        "case $d in 0.02) d=0.1;; *) d=$I;; esac; done",
        "kill $p 2>/dev/null",
    ]
)

LISTER = "; ".join(
    [
        _PRELUDE,
        'T=$1; D=$2; G=$3; I=$4; Q=$5; IFS=""',
        "command -v stat >/dev/null 2>&1 || { printf '%s H err notfound stat\\n' \"$T\"; exit 127; }",
        "while :; do r=; if cd -- \"$D\" 2>/dev/null; then r=$(stat -L -c '%F|%d:%i|%s|%.9Y|%n' -- $G 2>/dev/null); fi; "
        'printf \'%s S\\n%s\\n%s E\\n\' "$T" "$r" "$T" || exit 0; [ "$Q" = 1 ] && exit 0; sleep "$I" || exit 0; done',
    ]
)

_SUMS = (
    "sums() { for r in $R; do a=${r%:*}; l=${r#*:}; "
    'c=$(tail -c +$((a + 1)) -- "$2" 2>/dev/null | head -c "$l" | cksum 2>/dev/null); '
    'printf \'%s P C %s %s %s %s\\n\' "$T" "$1" "$a" "$l" "$c"; done; }'
)

# probe: what is at the name now, and (when it is another file) where the file with identity X
# went in the directory; the cksum of each byte range R ("start:length ...") of both.
PROBE = "; ".join(
    [
        _PRELUDE,
        "T=$1; D=$2; B=$3; X=$4; R=$5",
        'cd -- "$D" 2>/dev/null || { printf \'%s P E\\n\' "$T"; exit 0; }',
        _SUMS,
        "P=./$B; id=",
        "st=$(stat -L -c '%F|%d:%i|%s|%n' -- \"$P\" 2>/dev/null) && { "
        'printf \'%s P N %s\\n\' "$T" "$st"; id=${st#*|}; id=${id%%|*}; '
        'case $st in regular*) sums name "$P";; esac; }',
        '[ "$id" != "$X" ] && stat -L -c \'%F|%d:%i|%s|%n\' -- ./* ./.[!.]* ./..?* 2>/dev/null | '
        'while IFS= read -r l; do case $l in regular*"|$X|"*) '
        'f=${l#*"|$X|"}; f=${f#*|}; printf \'%s P O %s\\n\' "$T" "$l"; sums old "$f"; break;; esac; done',
        "printf '%s P E\\n' \"$T\"",
    ]
)

# copies: regular files named NAME?* (logrotate's NAME.1, NAME-DATE) at least O bytes long
# (up to 8), with the checksums of the ranges R: where a copy-truncated file's old bytes went.
COPIES = "; ".join(
    [
        _PRELUDE,
        "T=$1; D=$2; B=$3; O=$4; R=$5; n=0",
        'cd -- "$D" 2>/dev/null || { printf \'%s P E\\n\' "$T"; exit 0; }',
        _SUMS,
        "stat -L -c '%F|%d:%i|%s|%n' -- ./\"$B\"?* 2>/dev/null | while IFS= read -r l; do "
        "case $l in regular*) ;; *) continue;; esac; f=${l#*|*|}; s=${f%%|*}; f=${f#*|}; "
        '[ "$s" -ge "$O" ] || continue; printf \'%s P K %s\\n\' "$T" "$l"; sums "k$n" "$f"; '
        "n=$((n + 1)); [ $n -lt 8 ] || break; done",
        "printf '%s P E\\n' \"$T\"",
    ]
)

CAT = "; ".join(
    [
        _PRELUDE,
        "T=$1; F=$2; L=$3",
        "command -v head >/dev/null 2>&1 || { printf '%s H err notfound head\\n' \"$T\"; exit 127; }",
        '[ -e "$F" ] || { printf \'%s H err enoent\\n\' "$T"; exit 2; }',
        '[ -d "$F" ] && { printf \'%s H err isdir\\n\' "$T"; exit 2; }',
        '[ -r "$F" ] || { printf \'%s H err eacces\\n\' "$T"; exit 2; }',
        "printf '%s H ok\\n' \"$T\"",
        '[ "$L" = 0 ] && exec cat -- "$F"',
        'exec head -c "$L" -- "$F"',
    ]
)


def _command(script: str, *args: str) -> str:
    return "sh -c " + shlex.quote(script) + " specwatch " + " ".join(shlex.quote(a) for a in args)


def new_tag() -> str:
    return "\x1fspecwatch-" + secrets.token_hex(12)


def new_nonce() -> str:
    """A run of ``./`` and ``/`` (resolves to the same directory) that no log line will hold."""
    bits = secrets.randbits(48)
    return "./" + "".join("./" if bits >> i & 1 else "/" for i in range(48))


def reader_command(
    tag: str,
    nonce: str,
    rp: RemotePath,
    name: str,
    *,
    expect: str = "-",
    offset: int = 0,
    mode: str = "start",
    lines: int = 0,
    interval: float = 1.0,
    follow: bool = True,
    sums: str = "",
    ranges: list[tuple[int, int]] | None = None,
) -> str:
    """``name`` is the file to read in ``rp.dir`` (the pattern's current match, or ``rp.base``).
    ``mode="verify"``: resume at ``offset`` only if the file is ``expect``, not shorter, and the
    ``cksum`` lines of ``ranges`` joined are ``sums`` (:func:`expected_sums`); else the header is
    ``err moved``."""
    iv = "0" if not follow else f"{max(interval, 0.05):g}"
    r = " ".join(f"{a}:{n}" for a, n in ranges or ())
    return _command(READER, tag, nonce, rp.dir, name, expect, str(offset), mode, str(lines), iv, sums, r)


def expected_sums(chunks: list[bytes]) -> str:
    """What the reader's ``verify`` mode computes for byte ranges holding ``chunks``."""
    return "".join(f"{cksum(c)} {len(c)} " for c in chunks)


def probe_command(tag: str, rp: RemotePath, name: str, identity: str, ranges: list[tuple[int, int]]) -> str:
    r = " ".join(f"{a}:{n}" for a, n in ranges)
    return _command(PROBE, tag, rp.dir, name, identity, r)


def copies_command(tag: str, rp: RemotePath, name: str, at_least: int, ranges: list[tuple[int, int]]) -> str:
    r = " ".join(f"{a}:{n}" for a, n in ranges)
    return _command(COPIES, tag, rp.dir, name, str(at_least), r)


def lister_command(tag: str, rp: RemotePath, *, interval: float = 1.0, once: bool = False) -> str:
    return _command(LISTER, tag, rp.dir, rp.base, f"{max(interval, 0.05):g}", "1" if once else "0")


def cat_command(tag: str, path: str, limit: int = 0) -> str:
    return _command(CAT, tag, path, str(limit))


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
class Probe:
    """What :data:`PROBE` found: the name's entry and checksums, the old file's and its."""

    name: Entry | None = None
    old: Entry | None = None
    sums: dict[str, dict[tuple[int, int], tuple[int, int]]] = field(default_factory=dict)
    complete: bool = False
    copies: list[Entry] = field(default_factory=list)  # COPIES: sums under "k0", "k1", ...


def parse_probe(out: bytes, tag: str) -> Probe:
    """Parses :data:`PROBE`'s output (lines before the first tagged one, a login banner, are
    ignored); ``complete`` is False when its end mark never came."""
    probe = Probe()
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
