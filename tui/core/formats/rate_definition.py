"""How a segment's printed accept rate is defined: what every family's
:meth:`tui.core.formats.plugin.Format.rate_definition` answers (the statistics only read it)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tui.core.formats.families import FAMILIES
from tui.core.model.records import RATE_DRAFTS, RATE_DRAFTS_WORDS


@cache
def words() -> dict[str, str]:
    """Each rate definition's words for people (the app's numbers block, summary's tables): the
    shared one's, and every family's own (its data's ``[rates]``)."""
    out = {RATE_DRAFTS: RATE_DRAFTS_WORDS}
    for f in FAMILIES:
        out.update(f.data.rates)
    return out


@dataclass(slots=True)
class RateDefinition:
    definition: str | None  # one of the definitions :func:`words` knows, or None (unknown / ambiguous)
    drafts_per_step: int | None  # D for the normalised rate
    source: str  # "config", "inferred from values", "printed (vLLM/llama.cpp)", ...
    consistent: int = 0  # pairs that fit
    checked: int = 0  # pairs looked at
    note: str = ""

    def to_dict(self) -> dict:
        return {
            "printed_definition": self.definition,
            "drafts_per_step": self.drafts_per_step,
            "how_known": self.source,
            "pairs_checked": self.checked,
            "pairs_consistent": self.consistent,
            "note": self.note,
        }
