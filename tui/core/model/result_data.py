"""How the typed results (:mod:`tui.core.model.summary`) are declared, built from the statistics'
plain data and given back as JSON: the :func:`model` decorator, :func:`optional` fields,
:func:`build` and :func:`plain`."""

import dataclasses
import functools
import types
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union, cast, get_args, get_origin

CONFIG = {"extra": "forbid"}  # pydantic's config for the schema (a plain dict: no import here)
# kw_only: optional fields anywhere; no generated repr/eq/match args and no slots: each costs code
# generated at import, and summary starts on every run (the model is read, never compared)
model = dataclass(kw_only=True, repr=False, eq=False, match_args=False)

T = TypeVar("T")


def optional() -> Any:
    """A field whose key is absent from the JSON when it has no value."""
    return field(default=None, metadata={"optional": True})


Interval = list[float | None]  # [low, high]; an end JSON cannot hold (inf) is null


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    # the annotations are objects (no postponed evaluation here): no typing.get_type_hints, whose
    # evaluation of every annotation would cost summary's start more than the rest of the model
    return tuple((f.name, f.type, bool(f.metadata.get("optional"))) for f in dataclasses.fields(cls))


def build(cls: type[T], data: dict[str, Any]) -> T:
    """``cls`` from plain data: each field from its key (absent: an optional field's None), nested
    models built likewise; a key the model does not have is an error."""
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    spec = _fields(cast("type", cls))
    known = {name for name, _, _ in spec}
    unknown = [k for k in data if k not in known]
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown keys {unknown}")
    kwargs = {name: _value(tp, data[name]) for name, tp, _ in spec if name in data}
    return cls(**kwargs)


def _value(tp: Any, v: Any) -> Any:
    if v is None:
        return None
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        models = [a for a in get_args(tp) if isinstance(a, type) and dataclasses.is_dataclass(a)]
        if models:
            return build(models[0], v)
        rest = [a for a in get_args(tp) if a is not type(None)]
        return _value(rest[0], v) if len(rest) == 1 else v
    if origin is list:
        (arg,) = get_args(tp)
        return [_value(arg, x) for x in v] if _needs_build(arg) else list(v)
    if origin is dict:
        _, arg = get_args(tp)
        return {k: _value(arg, x) for k, x in v.items()} if _needs_build(arg) else dict(v)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return build(tp, v)
    return v


@functools.cache
def _needs_build(tp: Any) -> bool:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return True
    return any(_needs_build(a) for a in get_args(tp))


def plain(obj: Any) -> Any:
    """A model as plain JSON-ready data, its fields in order (an optional field without a value
    left out)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for name, _, opt in _fields(type(obj)):
            v = getattr(obj, name)
            if v is None and opt:
                continue
            out[name] = plain(v)
        return out
    if isinstance(obj, list):
        return [plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: plain(x) for k, x in obj.items()}
    return obj
