"""How a segment's printed accept rate is defined: what every family's
:meth:`tui.core.formats.plugin.Format.rate_definition` answers (the statistics only read it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class RateDefinition:
    definition: str | None  # one of the RATE_* names, or None (unknown / ambiguous)
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
