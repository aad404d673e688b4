"""``specwatch.toml``: named sources and named A/B pairs.

Found by ``--config FILE``, else ``$XDG_CONFIG_HOME/specwatch/specwatch.toml``, else
``~/.config/specwatch/specwatch.toml`` (a missing default file is an empty config)::

    [sources]
    broken = "/data/logs/eagle3-broken.log"              # a source text, as on the command line
    fixed = { source = "gpu1:/data/logs/fixed.log", label = "fixed config" }
    k8s = { source = "cmd:kubectl logs -f deploy/sglang" }

    [pairs]
    eagle3 = { a = "broken", b = "fixed" }               # or: eagle3 = ["broken", "fixed"]

    alerts = ["accept_len < 2.0 for 2m", "drift"]        # for every source (see tui.core.alerts.rules)
    [sources.gpu2]
    source = "gpu2:/data/logs/sglang.log"
    alerts = ["throughput < 100 for 5m"]                 # for this source only

A name can then be used wherever a source is accepted (``specwatch stream fixed``), and a pair
name where two sources are (``specwatch compare eagle3``; ``stream`` expands it to both). Pair
members are source names or source texts. Errors name the file and the key that is wrong.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

CONFIG_NAME = "specwatch.toml"
NAME_RX = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


class ConfigError(ValueError):
    """A config file that cannot be used; the message is one line per problem, with the key."""


def looks_like_source_text(text: str) -> bool:
    """Whether a pair member that is not a source name can be a source text (path, glob,
    ``-``, ``cmd:...``, ``host:/path``) rather than a mistyped name."""
    return text == "-" or any(c in text for c in "/.:~*?[")


def _check_rules(value: list[str]) -> list[str]:
    """Each alert rule text must parse; the error names its index and the bad part."""
    from tui.core.alerts.rules import RuleError, parse_rule

    for i, text in enumerate(value):
        try:
            parse_rule(text)
        except RuleError as exc:
            raise ValueError(f"rule {i + 1}: {exc}") from None
    return value


class SourceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, description="a source as on the command line")
    label: str | None = Field(default=None, min_length=1, description="the name shown (default: the key)")
    alerts: list[str] = Field(default=[], description="alert rules for this source only")

    _rules = field_validator("alerts")(_check_rules)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"source": value}
        if not isinstance(value, dict):
            raise ValueError(
                'expected a source text ("path", "cmd:...") or a table { source = "...", label = "..." }'
            )
        return value


class PairEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    a: str = Field(min_length=1)
    b: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            if len(value) != 2:
                raise ValueError(f"a pair is two sources, [A, B]; got {len(value)}")
            return {"a": value[0], "b": value[1]}
        if not isinstance(value, dict):
            raise ValueError('expected [A, B] or a table { a = "...", b = "..." }')
        return value


class FleetEntry(BaseModel):
    """``[fleet]``: the Prometheus the fleet view asks, and how. Secrets live here (or in a file
    named here), never on the command line; they are never printed."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(
        default=None, min_length=1, description="the Prometheus (or Thanos, Mimir...) URL"
    )
    bearer_token: str | None = Field(default=None, repr=False)
    bearer_token_file: str | None = None
    username: str | None = None
    password: str | None = Field(default=None, repr=False)
    password_file: str | None = None
    ca_file: str | None = None
    insecure_skip_verify: bool = False
    timeout: float = Field(default=10.0, gt=0, le=600)
    selector: str = Field(default="", description='label matchers every query gets, e.g. job=~"inference.*"')
    group_by: list[str] = Field(default=[], description="labels rows are grouped by")
    window: str = Field(default="30m", description="the window, e.g. 30m, 2h")
    logs: str | None = Field(
        default=None,
        min_length=1,
        description='where a row\'s log is, from its labels: "{instance_host}:/var/log/inference/*.log"',
    )

    @model_validator(mode="after")
    def _one_secret_each(self) -> FleetEntry:
        if self.bearer_token and self.bearer_token_file:
            raise ValueError("give bearer_token or bearer_token_file, not both")
        if self.password and self.password_file:
            raise ValueError("give password or password_file, not both")
        if (self.password or self.password_file) and not self.username:
            raise ValueError("a password needs a username")
        if (self.bearer_token or self.bearer_token_file) and self.username:
            raise ValueError("give a bearer token or a username and password, not both")
        return self


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sources: dict[str, SourceEntry] = {}
    pairs: dict[str, PairEntry] = {}
    fleet: FleetEntry = FleetEntry()
    alerts: list[str] = Field(default=[], description="alert rules for every source")
    _path: Path | None = PrivateAttr(default=None)

    _rules = field_validator("alerts")(_check_rules)

    @field_validator("sources", "pairs")
    @classmethod
    def _names(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        for name in value:
            if not NAME_RX.fullmatch(name):
                raise _KeyedError(
                    (str(info.field_name), repr(name)),
                    "not a usable name (letters, digits, '_', '.', '+', '-'; no '/', ':', '=' or spaces)",
                )
        return value

    @model_validator(mode="after")
    def _pairs_resolve(self) -> Settings:
        clash = sorted(set(self.sources) & set(self.pairs))
        if clash:
            raise ValueError(f"{clash[0]!r} is both a source and a pair name")
        for name, pair in self.pairs.items():
            for key in ("a", "b"):
                member = getattr(pair, key)
                if member in self.sources or looks_like_source_text(member):
                    continue
                hint = _did_you_mean(member, self.sources)
                raise _KeyedError(
                    ("pairs", name, key),
                    f"{member!r} is not a name in [sources]{hint}, "
                    "nor a path (write ./NAME for a file in the current directory)",
                )
        return self

    @property
    def path(self) -> Path | None:
        return self._path

    def source(self, name: str) -> SourceEntry | None:
        return self.sources.get(name)

    def pair(self, name: str) -> PairEntry | None:
        return self.pairs.get(name)


class _KeyedError(ValueError):
    def __init__(self, loc: tuple[str, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message


def _did_you_mean(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


_FIELDS: dict[tuple[str, ...], tuple[str, ...]] = {
    (): ("sources", "pairs", "alerts"),
    ("sources", "*"): ("source", "label", "alerts"),
    ("pairs", "*"): ("a", "b"),
}


def _format_error(origin: str, err: Mapping[str, Any]) -> str:
    loc = tuple(str(p) for p in err.get("loc", ()))
    ctx = err.get("ctx") or {}
    inner = ctx.get("error")
    if isinstance(inner, _KeyedError):
        return f"{origin}: {'.'.join(inner.loc)}: {inner.message}"
    key = ".".join(loc) or "(top level)"
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        parent = tuple("*" if i == 1 else p for i, p in enumerate(loc[:-1]))
        known = _FIELDS.get(parent, ())
        hint = _did_you_mean(loc[-1], known)
        allowed = f"; allowed: {', '.join(known)}" if known else ""
        return f"{origin}: {key}: unknown key{hint}{allowed}"
    if kind == "missing":
        return f"{origin}: {key}: required key is missing"
    msg = err.get("msg", "invalid value")
    msg = msg.removeprefix("Value error, ")
    return f"{origin}: {key}: {msg}"


def parse_settings(text: str, origin: str = CONFIG_NAME) -> Settings:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin}: not valid TOML: {exc}") from None
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join(_format_error(origin, e) for e in exc.errors())) from None


def default_config_path(env: Mapping[str, str] | None = None) -> Path:
    xdg = (os.environ if env is None else env).get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(os.path.expanduser("~")) / ".config"
    return base / "specwatch" / CONFIG_NAME


def load_settings(path: str | os.PathLike | None = None, *, env: dict[str, str] | None = None) -> Settings:
    """Loads ``path`` (must exist), else the default file (an empty config when it is missing)."""
    explicit = path is not None
    p = Path(os.path.expanduser(os.fspath(path))) if path is not None else default_config_path(env)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"config file not found: {p}") from None
        return Settings()
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {p}: {exc.strerror or exc}") from None
    settings = parse_settings(text, str(p))
    settings._path = p
    return settings
