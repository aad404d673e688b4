"""Messages the TUI posts (dataclasses). Sources never post one message per line: the workers
feed the pane models and post only what is rare and worth reacting to."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class SourceStatusChanged(Message):
    """A source event changed a pane's status (opened, idle, error, ended, reconnecting...)."""

    pane: int
    status: str
    message: str


@dataclass
class SourceFirstLines(Message):
    """A source's first lines have come: its pane is drawn whole at once, not at the cadence
    (numbers are drawn once a second: a pane opened from the fleet showed its history up to a
    second after the data was there)."""

    pane: int


@dataclass
class SourceFinished(Message):
    """A source's iterator ended; ``error`` is set when it failed."""

    pane: int
    error: str | None


@dataclass
class SegmentStarted(Message):
    pane: int
    segment: int
    reason: str
    config: str


@dataclass
class ScreenshotSaved(Message):
    path: str


@dataclass
class RecordsExported(Message):
    path: str
    rows: int


@dataclass
class MarkAdded(Message):
    number: int
    text: str


@dataclass
class RestartMarked(Message):
    pane: int
    segment: int


@dataclass
class WatchReady(Message):
    """The app's first screen (watch or fleet) is mounted (its widgets and workers exist): a stop
    signal that came during start-up may end the app now."""
