"""How many examples a property test draws: all of them in CI, a quarter on a developer's machine.

The properties (the parser never fails internally, any bytes are summarised, the native
reduction equals the Python one, ...) keep their meaning with fewer examples: each run draws new
ones (and replays the failures hypothesis saved), so the edit-test loop stays fast while CI
(``CI=true``) or anyone who asks (``HYPOTHESIS_PROFILE=ci``) draws the full number every run.
"""

from __future__ import annotations

import os

FAST_SHARE = 4
"""Outside CI a property test draws ``1 / FAST_SHARE`` of its examples ..."""

FAST_MIN = 25
"""... and never fewer than this."""


def full_run() -> bool:
    """CI, or a run that asked for the full number of examples."""
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("HYPOTHESIS_PROFILE", "") == "ci"


def examples(full: int) -> int:
    """``max_examples`` for a property test whose full run draws ``full`` examples."""
    return full if full_run() else min(full, max(FAST_MIN, full // FAST_SHARE))
