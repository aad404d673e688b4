"""Where a fleet row's log is: ``logs`` in ``[fleet]`` of specwatch.toml is a source spec with
the row's labels in braces, e.g. ``"{instance_host}:/var/log/sglang/*.log"`` (an SSH host and a
path, or a local path). Besides every label of the row, ``instance_host`` and ``instance_port``
are the ``instance`` label's host and port.

Label values come from Prometheus, i.e. from outside: a value that would make the host anything
but a host name (letters, digits, ``.``, ``-``, ``_``, an IPv6 literal in brackets) or put a
control character, a ``..`` component or a shell-special character in the path is refused with
the reason, never used.
"""

from __future__ import annotations

import re
import string

_HOST_RX = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+\])")
_USER_RX = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
_BAD_PATH = re.compile(r"[\x00-\x1f\x7f;|&$`<>\"'\\]")


class LogSpecError(ValueError):
    pass


def split_instance(instance: str) -> tuple[str, str]:
    """``host:port`` (or ``[v6]:port``, or a bare host) as (host, port)."""
    if instance.startswith("["):
        host, _, rest = instance[1:].partition("]")
        return host, rest.lstrip(":")
    host, sep, port = instance.rpartition(":")
    if not sep or not port.isdigit():
        return instance, ""
    return host, port


def fields(labels: dict[str, str]) -> dict[str, str]:
    out = dict(labels)
    host, port = split_instance(labels.get("instance", ""))
    out["instance_host"], out["instance_port"] = host, port
    return out


def log_spec(template: str, labels: dict[str, str]) -> str:
    """The source spec of a row's log (:class:`LogSpecError` with the reason when a label is
    missing or its value is not safe to use)."""
    values = fields(labels)
    names = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    for name in names:
        if not name.isidentifier():
            raise LogSpecError(f"fleet.logs: {{{name}}} is not a label name")
        if not values.get(name):
            raise LogSpecError(f"fleet.logs: the row has no {name!r} label")
    spec = template.format_map(values)
    if spec.startswith("/"):
        host, sep, path = "", "", spec
    elif "]:" in spec and spec.split("@", 1)[-1].startswith("["):
        head, _, path = spec.partition("]:")
        host, sep = head + "]", ":"
    else:
        host, sep, path = spec.partition(":")
        if not sep:  # a local path
            host, path = "", spec
    if sep:
        user, at, bare = host.rpartition("@")
        if (at and not _USER_RX.fullmatch(user)) or not _HOST_RX.fullmatch(bare):
            raise LogSpecError(f"fleet.logs: {host!r} is not a host name (from the row's labels)")
    if not path or _BAD_PATH.search(path) or "/../" in f"{path}/":
        raise LogSpecError(f"fleet.logs: {path!r} is not a usable path (from the row's labels)")
    return spec
