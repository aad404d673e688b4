"""What the SSH source and its follower share: a refused channel, and the lister's blocks."""

from __future__ import annotations

from tui.core.sources.ssh.remote_side import Entry, parse_entries


class ChannelRefused(Exception):
    """The connection is up but the host refused a new channel (sshd's MaxSessions, ...)."""


def lister_blocks(buf: bytes, tag: bytes) -> tuple[list[list[Entry]], bytes]:
    """The complete ``TAG S``..``TAG E`` blocks of a lister's output, and what is left over; a
    lister that cannot run ``stat`` gives one ``error`` entry."""
    out = []
    start_mark, end_mark = tag + b" S\n", b"\n" + tag + b" E\n"
    while True:
        i = buf.find(start_mark)
        j = buf.find(end_mark, i) if i >= 0 else -1
        if j < 0:
            break
        out.append(parse_entries(buf[i + len(start_mark) : j], True))
        buf = buf[j + len(end_mark) :]
    if tag + b" H err notfound" in buf:
        return out + [[Entry("error", "notfound", 0, 0.0, "stat")]], b""
    return out, buf[-(1 << 20) :]
