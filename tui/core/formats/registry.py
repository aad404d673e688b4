"""The server families' plug-ins, in the order a line is offered to them.

The families are found by :mod:`tui.core.formats.families` (every folder with a
``family.toml``, and the ``specwatch.formats`` entry points): nothing lists them by hand. Each
one's plug-in is the class its data names (``plugin = "module:Class"``, in its package), made
with its data; a family of data only gets a :class:`DeclaredFormat`, whose lines are read by its
declared shapes. :func:`register` adds a plug-in at run time (its lines are offered last).
"""

from __future__ import annotations

from importlib import import_module

from tui.core.formats import grammar
from tui.core.formats.families import FAMILIES, Family
from tui.core.formats.family_data import FamilyDataError
from tui.core.formats.plugin import Format, PrintedRate


def _make(family: Family) -> Format:
    spec = family.data.plugin
    if spec is None:
        from tui.core.formats.declared import DeclaredFormat

        return DeclaredFormat(family.data)
    module, _, cls_name = spec.partition(":")
    if family.package is None or not cls_name:
        raise FamilyDataError(f"{family.folder}: plugin = {spec!r} needs a package and 'module:Class'")
    cls = getattr(import_module(f"{family.package}.{module}"), cls_name)
    if not (isinstance(cls, type) and issubclass(cls, Format)):
        raise FamilyDataError(f"{family.folder}: plugin {spec!r} is not a Format subclass")
    return cls(family.data)


FORMATS: list[Format] = [_make(f) for f in FAMILIES]


def _name_printed_rate_families() -> None:
    shown = " / ".join(f.display for f in FORMATS if isinstance(f, PrintedRate))
    PrintedRate.printed_rate_source = f"as the server defines it ({shown})"


_name_printed_rate_families()

GENERIC = Format()  # what a record of no known family is counted as
_BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}


def get(name: str | None) -> Format:
    """The plug-in of a family (:data:`GENERIC` for None or a name no plug-in has)."""
    return _BY_NAME.get(name or "", GENERIC)


def names() -> tuple[str, ...]:
    return tuple(f.name for f in FORMATS)


def metrics_default() -> str | None:
    """The family of a metrics record that names none (the first metrics sources wrote none)."""
    return next((f.name for f in FORMATS if f.default_for_metric_records), None)


def register(fmt: Format) -> None:
    """Add a family after the bundled ones (its lines are offered to it last). Its anchors join
    :data:`grammar.EXTRA_ANCHORS`: the scanners leave a buffer holding one to the line parser."""
    if fmt.name in _BY_NAME:
        raise ValueError(f"a family named {fmt.name!r} is registered already")
    FORMATS.append(fmt)
    _BY_NAME[fmt.name] = fmt
    _name_printed_rate_families()
    for a in (*fmt.anchors, *fmt.marker_anchors):
        if a not in grammar.ANCHORS and a not in grammar.EXTRA_ANCHORS:
            grammar.EXTRA_ANCHORS.append(a)


def unregister(name: str) -> None:
    """Remove a family added by :func:`register` (tests)."""
    fmt = _BY_NAME.pop(name)
    FORMATS.remove(fmt)
    _name_printed_rate_families()
    keep = {a for f in FORMATS for a in (*f.anchors, *f.marker_anchors)}
    grammar.EXTRA_ANCHORS[:] = [a for a in grammar.EXTRA_ANCHORS if a in keep]
