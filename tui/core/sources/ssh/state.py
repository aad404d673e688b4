"""What the parts of an SSH source share, named: the file followed (:class:`FileState`, kept by
the source across reconnects), one connection's reading (:class:`ConnState`, shared by the
follow loop :class:`.tail.Session` and the :class:`.opening.Opener`), and what the session asks
of the source (:class:`SessionOwner`, which :class:`.source.SshSource` is)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from tui.core.sources.base import EventKind, SourceEvent
from tui.core.sources.generations import Gen, Step
from tui.core.sources.identity import Decision, Fingerprint
from tui.core.sources.lines import LineSplitter, StartAt

if TYPE_CHECKING:
    from tui.core.sources.ssh.connect import SshSettings
    from tui.core.sources.ssh.remote_side import ReaderDemux, RemotePath


@dataclass
class FileState:
    """The file an SSH source follows, as far as it has been read; it outlives connections, so
    a reconnect resumes exactly (see :mod:`.opening`)."""

    splitter: LineSplitter = field(default_factory=LineSplitter)
    fingerprint: Fingerprint = field(default_factory=Fingerprint)  # the bytes that identify the file
    identity: str | None = None  # device:inode of the file being read
    current: str | None = None  # its name in the directory
    cur_mtime: float = 0.0
    known: set[str] | None = None  # glob: identities present when the current was chosen
    opened_once: bool = False  # a file was opened (later opens resume; errors are retried)
    error: str | None = None  # the fatal error said, if any
    chain: list[Gen] = field(default_factory=list)  # the generations read (see generations.py)
    catchup: CatchUp | None = None  # generations being read after a rotation or reconnect
    heads: dict[tuple[str, int], bytes] = field(default_factory=dict)  # compressed files' first bytes
    mtime: float = 0.0  # the current file's modification time at its opening (the host's clock)


@dataclass
class ConnState:
    """One connection's reading: the reader being opened or read, the timers, what was said."""

    last_data: float  # loop time of the last data (for the idle event)
    reader: object | None = None  # the reader channel's process
    reader_since: float | None = None  # loop time the reader was started (its header is awaited)
    slow_start_said: bool = False  # "the host has not started the reader" said (once a connection)
    demux: ReaderDemux | None = None
    pending_name: str | None = None  # being opened
    header: bool = False  # the reader's header came
    verified: bool = True  # the file tail has open is the one the header named
    held: list[tuple[str, object]] = field(default_factory=list)  # parts held until verified
    open_size: int | None = None  # the size of the file tail has open, at the last status
    grew_at: float = 0.0  # loop time of the status that first showed that size
    seen_size: int | None = None  # open_size when tail said "file truncated"
    drain_from_line: int = 0  # the line number where reading the rest of an old file (or copy) began
    switch: tuple[str, float, int] | None = None  # name to switch to, since when, the offset then
    retry_at: float | None = None
    waiting_said: bool = False
    error_said: str | None = None
    idle_said: bool = False
    done: bool = False
    matches: int = 0  # glob: regular files matching
    lister_block: bytes = b""
    listed: bool = False
    refused: str | None = None  # a refused channel, for the loop to say
    decision: Decision | None = None  # what the last probe decided, for the header's event
    draining: Decision | None = None  # reading the rest of a rotated-away file
    failed: bool = False  # the header said the file could not be opened
    verifying: bool = False  # the reader checks the file itself (mode verify)
    probed: tuple[str, int] | None = None  # the last (identity, offset) probed
    steps: list[Step] = field(default_factory=list)  # what is left to read of them
    step: Step | None = None  # the one being read
    inflater: object | None = None  # a compressed step's decompressor
    skip: int = 0  # decompressed bytes of it already read (not handed out again)


@dataclass
class CatchUp:
    """One catch-up: what was read before it (the file followed then), what it read, what is
    gone. Said in one ``rotated`` event once the file at the name is open (or found missing)."""

    prev_identity: str | None
    prev_name: str | None
    prev_pos: int
    first_note: str = ""  # connected: how the old file was finished (read to its end ...)
    read: list[dict] = field(default_factory=list)  # {path, from, to, lines, compression}
    read_ids: list[str] = field(default_factory=list)  # the identity of each
    notes: list[str] = field(default_factory=list)  # one phrase per file read
    lost: list[str] = field(default_factory=list)
    lost_ids: set[str] = field(default_factory=set)
    lost_generations: int = 0
    expect: str | None = None  # the identity planned at the name
    expect_from: int = 0  # and the byte it is read from (its offset when it is the file read)
    rounds: int = 0  # listings in a row that read nothing (a rotation during the catch-up lists again)


class SessionOwner(Protocol):
    """What the follow loop and the opener use of their source: its settings and names, its
    events, and the reader's command line."""

    name: str
    host: str
    rp: RemotePath
    tag: str
    nonce: str
    follow: bool
    start: StartAt
    idle_after: float | None
    settings: SshSettings

    def event(self, kind: EventKind, message: str = "", name: str | None = None, **data) -> SourceEvent: ...

    def display(self, name: str | None) -> str: ...

    def reader_for(
        self,
        name: str,
        mode: str,
        *,
        offset: int | None = None,
        expect: str | None = None,
        follow: bool | None = None,
        lines: int = 0,
        sums: str = "",
        ranges: list[tuple[int, int]] | None = None,
    ) -> str: ...
