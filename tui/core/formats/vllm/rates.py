"""vLLM's own definition of the printed accept rate (family.toml's ``[rates]``): V0's cumulative
counters, accepted over drafted since the server started."""

from __future__ import annotations

from tui.core.formats.families import data

(RATE_VLLM_V0_CUMULATIVE,) = data("vllm").rates
