"""The pydantic boundary form of :class:`tui.core.model.records.Record` (JSON output, validation).

Derived from the dataclass, so a field is declared once: the same names, types and defaults,
except the two fields whose JSON form differs (``timestamp`` as ISO text, ``per_position`` as a
list). Imported only at the boundaries: pydantic is not needed on the hot path.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from tui.core.model.records import Record

# JSON forms that differ from the dataclass's (see Record.as_dict)
_JSON_TYPES: dict[str, Any] = {
    "timestamp": str | None,
    "per_position": list[float] | None,
    "step_histogram": list[int] | None,
}


def _fields() -> dict[str, Any]:
    hints = typing.get_type_hints(Record)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Record):
        tp = _JSON_TYPES.get(f.name, hints[f.name])
        if f.default is not dataclasses.MISSING:
            out[f.name] = (tp, f.default)
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = (tp, Field(default_factory=f.default_factory))
        else:
            out[f.name] = (tp, ...)
    return out


RecordModel: type[BaseModel] = create_model("RecordModel", __config__=ConfigDict(extra="forbid"), **_fields())
RecordModel.__doc__ = "The boundary form of :class:`Record` (JSON, validation)."
