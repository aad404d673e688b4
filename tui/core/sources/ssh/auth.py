"""What SSH says to the user: :class:`SshError` (one line, and whether retrying can help), the
host key check (known_hosts, ``accept_new_host_key``), the keys authentication could use, and
:func:`describe_error`, which turns any connection failure into an :class:`SshError`.
Passwords and passphrases are never asked for, logged or shown."""

from __future__ import annotations

import asyncio
import errno
import os
import socket
from dataclasses import dataclass
from typing import Any

import asyncssh

from tui.core.sources.target import SshTarget


class SshError(Exception):
    """A one-line, user-facing SSH problem. ``fatal``: retrying cannot help (host key, auth,
    config); ``first_fatal``: fatal only before the first successful connection (unknown name)."""

    def __init__(
        self,
        message: str,
        kind: str,
        *,
        fatal: bool = False,
        first_fatal: bool = False,
        attempt: int = 0,
        delay: float = 0.0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.fatal = fatal
        self.first_fatal = first_fatal
        self.attempt = attempt
        self.delay = delay

    def copy(self) -> SshError:
        return SshError(
            self.message,
            self.kind,
            fatal=self.fatal,
            first_fatal=self.first_fatal,
            attempt=self.attempt,
            delay=self.delay,
        )


def target_text(t: SshTarget) -> str:
    user = f"{t.user}@" if t.user else ""
    port = f":{t.port}" if t.port else ""
    return f"{user}{t.host}{port}"


# -- host keys ----------------------------------------------------------------------------------


def known_hosts_files(setting: Any) -> list[str]:
    """The known_hosts files in force (asyncssh's option: [] means the default file)."""
    if setting is None:
        return []
    if isinstance(setting, (str, os.PathLike)):
        setting = [setting]
    if not isinstance(setting, (list, tuple)) or not setting:
        return [os.path.expanduser("~/.ssh/known_hosts")]
    return [os.path.expanduser(os.fspath(p)) for p in setting if isinstance(p, (str, os.PathLike))]


def known_hosts_name(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


class HostKeyCheck:
    """Decides on a host key asyncssh could not match in known_hosts."""

    def __init__(self, files: list[str], accept_new: bool) -> None:
        self.files = files
        self.accept_new = accept_new
        self.seen: tuple[str, int, asyncssh.SSHKey, bool] | None = None  # host, port, key, host known
        self.recorded: str | None = None

    def known_entries(self, host: str, addr: str, port: int) -> bool:
        for path in self.files:
            if not os.path.isfile(path):
                continue
            try:
                keys, cas, *_ = asyncssh.match_known_hosts(path, host, addr, port)
            except (OSError, ValueError):
                continue
            if keys or cas:
                return True
        return False

    def validate(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        known = self.known_entries(host, addr, port)
        self.seen = (host, port, key, known)
        if known or not self.accept_new:
            return False
        target = self.files[0] if self.files else os.path.expanduser("~/.ssh/known_hosts")
        try:
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            line = f"{known_hosts_name(host, port)} {key.export_public_key('openssh').decode().strip()}\n"
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a") as f:
                f.write(line)
            self.recorded = target
        except OSError:
            self.recorded = None  # trusted for this run only; said in the connected event
        return True


def short_path(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home + os.sep) else path


def host_key_message(check: HostKeyCheck, who: str, exc: Exception) -> str:
    files = (
        ", ".join(short_path(f) for f in check.files)
        or "known_hosts (checking disabled by UserKnownHostsFile none)"
    )
    if check.seen is None:
        return f"{who}: host key not trusted ({exc}); check {files}"
    host, port, key, known = check.seen
    fp = f"{key.get_algorithm()} key {key.get_fingerprint('sha256')}"
    name = known_hosts_name(host, port)
    if known:
        return (
            f"{who}: REFUSED: the host key has CHANGED: the server offers {fp}, which does not match "
            f"{files}. This may be an attack (someone in the middle) or a reinstalled host. If you know "
            f"why it changed, remove the old key with ssh-keygen -R '{name}' and connect again"
        )
    return (
        f"{who}: unknown host {name}: its {fp} is not in {files}. Check the fingerprint, then trust it "
        f"with --accept-new-host-key (or connect once with ssh)"
    )


# -- which keys were tried ----------------------------------------------------------------------

_DEFAULT_KEYS = ("id_ed25519_sk", "id_ecdsa_sk", "id_ed448", "id_ed25519", "id_ecdsa", "id_rsa", "id_dsa")


@dataclass
class KeyFacts:
    """The private key files authentication could use (as the user would write them), those
    skipped because they are passphrase-protected, and the agent (None: no agent)."""

    files: list[str]
    encrypted: list[str]
    agent: str | None


def key_facts(client_keys: Any, identity_files: Any, agent_path: str | None) -> KeyFacts:
    """``client_keys``: what the options named (paths or keys; ``()``: not given);
    ``identity_files``: IdentityFile from ~/.ssh/config. Reads the files, only after a failure."""
    paths: list[str] = []
    named = client_keys if client_keys not in ((), None) else identity_files
    if isinstance(named, (str, os.PathLike)):
        named = [named]
    loaded = 0  # keys given as objects, not files
    for k in named or ():
        if isinstance(k, (str, os.PathLike)):
            paths.append(os.path.expanduser(os.fspath(k)))
        else:
            loaded += 1
    if not paths and client_keys is not None and client_keys == ():
        paths = [os.path.expanduser(os.path.join("~", ".ssh", f)) for f in _DEFAULT_KEYS]
        paths = [p for p in paths if os.path.isfile(p)]
    files, encrypted = [], []
    for path in paths:
        files.append(short_path(path))
        try:
            asyncssh.read_private_key(path)
        except asyncssh.KeyImportError as exc:
            if "assphrase" in str(exc):
                encrypted.append(short_path(path))
        except (OSError, ValueError):
            pass
    if loaded:
        files.append(f"{loaded} key{'s' if loaded > 1 else ''} given in the options")
    return KeyFacts(files, encrypted, agent_path or None)


def auth_message(who: str, where: str, keys: KeyFacts | None) -> str:
    """Why no key was accepted, naming the keys tried."""
    if keys is None:
        return (
            f"{who}: authentication failed for {where}: the server accepted none of the keys "
            "offered (ssh-agent, IdentityFile, ~/.ssh/id_*); passwords are not used"
        )
    usable = [f for f in keys.files if f not in keys.encrypted]
    tried = usable + ([f"the keys in ssh-agent ({short_path(keys.agent)})"] if keys.agent else [])
    offered = ", ".join(tried) if tried else "none"
    if keys.encrypted and not keys.agent:
        enc = keys.encrypted[0]
        more = f" (and {len(keys.encrypted) - 1} more)" if len(keys.encrypted) > 1 else ""
        return (
            f"{who}: authentication failed for {where}: the key {enc}{more} is passphrase-protected: add it "
            f"to ssh-agent (ssh-add {enc}); specwatch never asks for passphrases. Keys offered: {offered}"
        )
    note = ""
    if keys.encrypted:
        note = (
            f"; {', '.join(keys.encrypted)} is passphrase-protected and not in the agent: add it with ssh-add"
        )
    if not tried:
        return (
            f"{who}: authentication failed for {where}: no key to offer (no IdentityFile, no ~/.ssh/id_*, "
            f"no ssh-agent){note}; passwords are not used"
        )
    return (
        f"{who}: authentication failed for {where}: the server accepted none of the keys offered: "
        f"{offered}{note}; passwords are not used"
    )


# -- errors -------------------------------------------------------------------------------------


def describe_error(
    exc: BaseException, who: str, where: str, check: HostKeyCheck | None, keys: KeyFacts | None = None
) -> SshError:
    """``who``: what the user typed (``gpu1``); ``where``: resolved ``user@addr:port``; ``keys``:
    the keys authentication could use (for an authentication failure)."""
    if who == where or where.endswith("@" + who) or where.startswith(who):
        where_ = where
    else:
        where_ = f"{where} ({who})"
    where = where_
    if isinstance(exc, SshError):
        return exc
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return SshError(host_key_message(check or HostKeyCheck([], False), who, exc), "hostkey", fatal=True)
    if isinstance(exc, asyncssh.PermissionDenied):
        return SshError(auth_message(who, where, keys), "auth", fatal=True)
    if isinstance(exc, asyncssh.KeyImportError):
        if keys is not None and keys.encrypted:
            enc = keys.encrypted[0]
            return SshError(
                f"{who}: the key {enc} is passphrase-protected: add it to ssh-agent (ssh-add {enc}); "
                "specwatch never asks for passphrases",
                "auth",
                fatal=True,
            )
        return SshError(
            f"{who}: cannot use a private key: {exc}; load it into the agent with ssh-add", "auth", fatal=True
        )
    if isinstance(exc, asyncssh.KeyExchangeFailed):
        hint = ""
        if check is not None and check.files and "host key" in str(exc).lower():
            hint = " (known_hosts has a key of another type for this host: did the host key change?)"
        return SshError(f"{who}: SSH negotiation with {where} failed: {exc}{hint}", "protocol", fatal=True)
    if isinstance(exc, socket.gaierror):
        return SshError(
            f"{who}: unknown host name {who.rsplit('@', 1)[-1].split(':')[0]!r} "
            f"({exc.strerror or exc}); check the name or add a Host entry to ~/.ssh/config",
            "dns",
            first_fatal=True,
        )
    if isinstance(exc, ConnectionRefusedError):
        return SshError(f"{who}: connection refused by {where} (is sshd running on that port?)", "refused")
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return SshError(f"{who}: no answer from {where} (timed out)", "timeout")
    if isinstance(exc, asyncssh.ChannelOpenError):
        return SshError(f"{who}: {where}: {exc.reason or exc}", "lost")
    if isinstance(exc, (asyncssh.ConnectionLost, asyncssh.DisconnectError)):
        reason = getattr(exc, "reason", "") or str(exc) or "connection lost"
        return SshError(f"{who}: connection to {where} lost ({reason})", "lost")
    if isinstance(exc, FileNotFoundError):
        return SshError(
            f"{who}: {exc.strerror}: {exc.filename} (named in ~/.ssh/config or the options)",
            "config",
            fatal=True,
        )
    if isinstance(exc, OSError):
        if exc.errno in (
            errno.EHOSTUNREACH,
            errno.ENETUNREACH,
            errno.ECONNRESET,
            errno.ECONNABORTED,
            errno.EPIPE,
        ):
            return SshError(f"{who}: cannot reach {where}: {exc.strerror or exc}", "unreachable")
        return SshError(f"{who}: cannot connect to {where}: {exc.strerror or exc}", "oserror")
    if isinstance(exc, (ValueError, asyncssh.ConfigParseError)):
        return SshError(f"{who}: cannot use the SSH settings: {exc}", "config", fatal=True)
    if isinstance(exc, asyncssh.Error):
        return SshError(f"{who}: SSH error from {where}: {exc.reason or exc}", "other")
    return SshError(f"{who}: {type(exc).__name__}: {exc}", "other", fatal=True)
