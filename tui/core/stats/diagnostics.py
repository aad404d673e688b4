"""What a segment's numbers say that a user should know (``Segment.diagnostics``): no draft ever
accepted, values refused, too few records, no acceptance numbers, how the rate is defined."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.core.stats.segments import Segment

STUCK_MIN = 5
NO_ACCEPT_DRAFTED = 100  # drafted tokens with none accepted: "no draft is being accepted"
FEW = 30


def no_draft_accepted(self: Segment) -> str | None:
    """Why this segment accepts no draft at all, as soon as the data shows it: ≥ 100 drafted
    tokens with none accepted (counts), or accept len exactly 1.00 in ≥ 5 lines (SGLang)."""
    pr = self.all.pooled_rate
    if pr.denominator >= NO_ACCEPT_DRAFTED and pr.numerator == 0:
        return f"0 of {pr.denominator:.0f} drafted tokens accepted"
    al = self.all.accept_len
    if al.n >= STUCK_MIN and al.min == 1.0 and al.max == 1.0 and not pr.denominator:
        return f"accept len is exactly 1.00 in all {al.n} records"
    return None


def of_segment(self: Segment) -> list[dict]:
    out = []
    al = self.all.accept_len
    stuck = no_draft_accepted(self)
    if stuck is not None:
        configured = self.config.speculative or self.config.family is None
        out.append(
            {
                "code": "accept_len_stuck_at_1",
                "level": "warning",
                "message": stuck
                + (" with a draft model configured" if self.config.speculative else "")
                + ": no draft token is ever accepted — likely a misconfiguration (e.g. an EAGLE-3 draft "
                "run with --speculative-algorithm EAGLE, or wrong/missing eagle_aux_hidden_state_layer_ids)",
                "configured": configured,
            }
        )
    for note in self.config.notes:  # the server said why acceptance lines will be missing
        out.append({"code": "server_note", "level": "warning", "message": note})
    era = self.era.diagnostic() if self.era is not None else None
    if era is not None:
        out.append(era)
    if self.refused.total():
        out.append(
            {
                "code": "values_refused",
                "level": "warning",
                "message": self.refused.message(),
                **self.refused.to_dict(),
            }
        )
    if self.records and al.n < FEW:
        out.append(
            {
                "code": "too_few_records",
                "level": "info",
                "message": f"only {al.n} accept len values: too few for a conclusion (want ≥ {FEW})",
            }
        )
    if self.records and al.n == 0 and self.all.accept_rate.n == 0 and self.all.accept_len_derived.n == 0:
        out.append(
            {
                "code": "no_acceptance",
                "level": "info",
                "message": "metric lines carry no acceptance numbers (speculative decoding off?)",
            }
        )
    rd = self.rate_definition()
    if rd.note and self.all.accept_rate.n:
        out.append({"code": "rate_definition", "level": "info", "message": rd.note})
    return out
