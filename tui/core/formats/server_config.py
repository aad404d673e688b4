"""The configuration a segment ran with, read from the server's startup lines."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tui.core.formats import registry


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def _str(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).strip()
    return s or None


@dataclass
class ServerConfig:
    """What a segment's server was started with (None: not printed / not known).

    A plain dataclass: it is built from log text the parser already checked, on the hot path of
    ``summary``; pydantic is kept for data that comes from users (config files, themes).
    """

    family: str | None = None
    version: str | None = None
    model_path: str | None = None
    algorithm: str | None = None
    draft_model_path: str | None = None
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None  # SGLang tree size incl. the root token
    num_speculative_tokens: int | None = None  # vLLM k
    tp_size: int | None = None
    dp_size: int | None = None
    args: dict[str, Any] = field(default_factory=dict)  # the raw args that were read
    draft: dict[str, Any] = field(default_factory=dict)  # the draft model's own config.json facts
    notes: list[str] = field(default_factory=list)  # what its startup lines said the log will lack

    def update(self, family: str | None, args: dict[str, Any], version: str | None = None) -> None:
        if family and not self.family:
            self.family = family
        if version:
            self.version = version
        if not args:
            return
        hint = args.get("hint")  # a startup line's word on what the log will lack (a family's marker)
        if isinstance(hint, str) and hint not in self.notes:
            self.notes.append(hint)
        self.args.update(
            {
                k: v
                for k, v in args.items()
                if k != "hint" and (k != "speculative_config" or isinstance(v, (dict, str)))
            }
        )
        a = self.args
        self.model_path = _str(a.get("model_path") or a.get("model")) or self.model_path
        if registry.get(self.family).speculative_config_args or "speculative_config" in a:
            sc = a.get("speculative_config")
            if isinstance(sc, dict):
                self.algorithm = _str(sc.get("method")) or self.algorithm
                self.draft_model_path = _str(sc.get("model")) or self.draft_model_path
                self.num_speculative_tokens = (
                    _int(sc.get("num_speculative_tokens")) or self.num_speculative_tokens
                )
            self.tp_size = _int(a.get("tensor_parallel_size")) or self.tp_size
            self.dp_size = _int(a.get("data_parallel_size")) or self.dp_size
        if "speculative_algorithm" in a:
            self.algorithm = _str(a.get("speculative_algorithm"))
        if "speculative_draft_model_path" in a:
            self.draft_model_path = _str(a.get("speculative_draft_model_path"))
        for key, attr in (
            ("speculative_num_steps", "num_steps"),
            ("speculative_eagle_topk", "topk"),
            ("speculative_num_draft_tokens", "num_draft_tokens"),
            ("tp_size", "tp_size"),
            ("dp_size", "dp_size"),
        ):
            if key in a:
                setattr(self, attr, _int(a[key]))

    @property
    def effective_num_draft_tokens(self) -> int | None:
        """SGLang forces ndt = steps + 1 when topk == 1 (docs/formats.md, "What the rate means"); else the printed value."""
        if self.topk == 1 and self.num_steps is not None:
            return self.num_steps + 1
        return self.num_draft_tokens

    @property
    def drafts_per_step(self) -> int | None:
        """Draft tokens proposed per request per verify step."""
        if self.num_speculative_tokens is not None:
            return self.num_speculative_tokens
        ndt = self.effective_num_draft_tokens
        if ndt is not None and ndt > 1:
            return ndt - 1
        return None

    @property
    def synthetic(self) -> str | None:
        """What the server said of a synthetic acceptance mode (a benchmarking run whose
        acceptance is drawn at random, not measured: a family's startup line, config key
        ``synthetic``); None for a real run."""
        v = self.args.get("synthetic")
        return v if isinstance(v, str) and v else None

    @property
    def speculative(self) -> bool:
        alg = (self.algorithm or "").upper()
        return bool(self.draft_model_path) or (alg not in ("", "NONE"))

    def label(self) -> str:
        """Short text: ``EAGLE3 steps=3 topk=1 ndt=4 draft=eagle3-llama``."""
        parts = ["SYNTHETIC"] if self.synthetic else []
        if self.algorithm:
            parts.append(str(self.algorithm))
        if self.num_steps is not None:
            parts.append(f"steps={self.num_steps}")
        if self.topk is not None:
            parts.append(f"topk={self.topk}")
        ndt = self.effective_num_draft_tokens
        if ndt is not None:
            parts.append(f"ndt={ndt}")
        if self.num_speculative_tokens is not None:
            parts.append(f"k={self.num_speculative_tokens}")
        if self.draft_model_path:
            parts.append("draft=" + self.draft_model_path.rstrip("/").rsplit("/", 1)[-1])
        if self.version:
            parts.append(f"v{self.version.lstrip('v')}")
        return " ".join(parts) if parts else "config unknown"

    def summary_dict(self) -> dict[str, Any]:
        d = asdict(self)
        del d["args"]
        d["effective_num_draft_tokens"] = self.effective_num_draft_tokens
        d["label"] = self.label()
        if self.synthetic:  # only there for a synthetic run
            d["synthetic"] = True
        return d
