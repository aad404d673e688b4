"""A followed source's status, as its events and lines say it: the names, and the one mapping from
what happened to the status it leads to (used by :class:`tui.core.pipeline.driver.Driver`, so the
app's panes, ``stream``, ``export`` and ``summary`` of a metrics source agree).

* ``connecting``: nothing yet;
* ``live``: lines arrive, or the source is open (opened, connected, a seek);
* ``idle``: no new line for a while; ``waiting``: the file is not there; ``reconnecting``;
* ``error``: a fatal error (an ``error`` event with ``fatal``, a command that exited non-zero, an
  error the source gives when it ends), or a non-fatal one not yet followed by data;
* ``ended``: end of file, the command exited with 0, or the source's iterator ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tui.core.sources.base import EventKind, SourceEvent


class Status(StrEnum):
    CONNECTING = "connecting"
    LIVE = "live"
    IDLE = "idle"
    WAITING = "waiting"
    RECONNECTING = "reconnecting"
    ERROR = "error"
    ENDED = "ended"


STATES: tuple[str, ...] = tuple(s.value for s in Status)

_EVENT_STATUS = {
    EventKind.OPENED: Status.LIVE,
    EventKind.CONNECTED: Status.LIVE,
    EventKind.SEEK: Status.LIVE,
    EventKind.IDLE: Status.IDLE,
    EventKind.WAITING: Status.WAITING,
    EventKind.RECONNECTING: Status.RECONNECTING,
}
# Lines arriving bring a source back to live from these (and from a non-fatal error).
_RESUMED_BY_LINES = (Status.CONNECTING, Status.IDLE, Status.WAITING, Status.RECONNECTING)


@dataclass(frozen=True, slots=True)
class Change:
    """A new status and its message; ``fatal``: the message is the source's fatal error."""

    status: Status
    message: str
    fatal: bool = False


def after_event(ev: SourceEvent, status: Status) -> Change | None:
    """The status ``ev`` leads to from ``status``; None when it leaves the status as it is (an
    event that says nothing about it, or an end after an error)."""
    kind = ev.kind
    if kind == EventKind.ERROR:
        return Change(Status.ERROR, ev.message, bool(ev.data.get("fatal")))
    if kind == EventKind.EXITED and ev.data.get("returncode"):
        return Change(Status.ERROR, ev.message, True)
    if kind in (EventKind.EOF, EventKind.EXITED):
        return None if status == Status.ERROR else Change(Status.ENDED, ev.message)
    new = _EVENT_STATUS.get(kind)
    return None if new is None else Change(new, ev.message)


def after_lines(status: Status, fatal: bool) -> Change | None:
    """The status lines arriving lead to: live, unless the source has ended or is in error after
    a fatal one (``fatal``: a fatal error has been seen)."""
    if status in _RESUMED_BY_LINES or (status == Status.ERROR and not fatal):
        return Change(Status.LIVE, "")
    return None


def after_end(status: Status, message: str, error: str | None, fatal: bool) -> Change | None:
    """The status when the source's iterator ends (``error``: the source's own error, if any;
    ``message``: the status message until now, kept)."""
    if error and not fatal:
        return Change(Status.ERROR, error, True)
    if status != Status.ERROR:
        return Change(Status.ENDED, message)
    return None
