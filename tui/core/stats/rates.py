"""The accept rate on one definition: the normalised rate *accepted drafts / proposed drafts* =
``(AL − 1) / D``, with ``D`` the drafts proposed per request per verify step. It is an exact
linear function of accept len, so its statistics are those of accept len, re-expressed.

Which definition a printed rate used is its family's to say
(:meth:`tui.core.formats.plugin.Format.rate_definition`; SGLang's eras are in
:mod:`tui.core.formats.sglang.rates`).
"""

from __future__ import annotations

from tui.core.formats.rate_definition import RateDefinition

__all__ = ["MAX_SAMPLES", "RateDefinition", "normalise_transform"]

MAX_SAMPLES = 200  # (accept len, accept rate) pairs a segment keeps to tell the definition


def normalise_transform(d: int | None) -> tuple[float, float] | None:
    """(a, b) with normalised rate = a + b · AL = (AL − 1)/D."""
    if not d:
        return None
    return (-1.0 / d, 1.0 / d)
