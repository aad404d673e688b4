"""SSH connections for sources: one per host shared by every file on it, host keys checked,
errors said in one line, reconnects paced by backoff with jitter.

Addressing is OpenSSH's: asyncssh reads ``~/.ssh/config`` (Host aliases, HostName, Port, User,
IdentityFile, ProxyJump, UserKnownHostsFile, ServerAliveInterval, ...) and uses the SSH agent
when ``SSH_AUTH_SOCK`` is set. Host keys are verified against the known_hosts files; an unknown
host is refused with its key's fingerprint unless ``accept_new_host_key`` (then the key is
recorded, like ``StrictHostKeyChecking=accept-new``); a changed key is always refused.
Passwords and passphrases are never asked for, logged or shown: keys come from the agent or
from unencrypted key files.
"""

from __future__ import annotations

import asyncio
import errno
import os
import random
import socket
from dataclasses import dataclass, field
from typing import Any

import asyncssh

from tui.core.sources.aio import wait_for
from tui.core.sources.target import SshTarget

DEFAULT_KEEPALIVE = (5.0, 2)  # a dead link is noticed after ~interval * (count + 1) = 15 s
DEFAULT_CONNECT_TIMEOUT = 10.0


@dataclass
class SshSettings:
    accept_new_host_key: bool = False
    keepalive_interval: float | None = None  # None: ServerAliveInterval from ~/.ssh/config, else 5 s
    keepalive_count_max: int | None = None  # None: ServerAliveCountMax, else 2
    connect_timeout: float | None = None  # None: ConnectTimeout, else 10 s
    reconnect_initial: float = 0.5  # first retry after 0.25-0.5 s
    reconnect_max: float = 10.0  # retries at most this far apart (5-10 s with jitter)
    status_interval: float = 1.0  # how often the remote side looks at the file's name
    settle: float = 0.25  # how long a rotated-away file is given to finish
    max_sessions: int = 10  # channels one connection may carry (OpenSSH's MaxSessions default)
    connect_options: dict[str, Any] = field(default_factory=dict)  # extra asyncssh.connect() arguments

    def delay(self, attempt: int) -> float:
        """Seconds before retry number ``attempt`` (1, 2, ...): doubling, capped, 50-100 % jitter."""
        base = min(self.reconnect_max, self.reconnect_initial * (2 ** max(0, attempt - 1)))
        return base * random.uniform(0.5, 1.0)


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


def _known_hosts_files(setting: Any) -> list[str]:
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


class _Client(asyncssh.SSHClient):
    def __init__(self, check: HostKeyCheck) -> None:
        self.check = check

    def validate_host_public_key(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        return self.check.validate(host, addr, port, key)


def _short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home + os.sep) else path


def host_key_message(check: HostKeyCheck, who: str, exc: Exception) -> str:
    files = (
        ", ".join(_short(f) for f in check.files)
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
        files.append(_short(path))
        try:
            asyncssh.read_private_key(path)
        except asyncssh.KeyImportError as exc:
            if "assphrase" in str(exc):
                encrypted.append(_short(path))
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
    tried = usable + ([f"the keys in ssh-agent ({_short(keys.agent)})"] if keys.agent else [])
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


# -- shared connections -------------------------------------------------------------------------


class SharedConnection:
    """One SSH connection to a target, shared by the sources that read from it.

    :meth:`get` returns the live connection, or makes the next attempt when its time has come
    (every caller waiting meanwhile shares that one attempt); a failed attempt raises
    :class:`SshError` carrying the attempt number and the delay before the next one.
    """

    def __init__(self, key: tuple, target: SshTarget, settings: SshSettings) -> None:
        self.key = key
        self.target = target
        self.settings = settings
        self.who = target_text(target)
        self.where = self.who
        self.refs = 0
        self.channels = 0  # long-lived channels the sources on it use
        self.conn: asyncssh.SSHClientConnection | None = None
        self.connects = 0  # successful connections so far
        self.failures = 0  # failed attempts since the last success
        self.next_at = 0.0
        self.server_version = ""
        self.host_key_note = ""
        self._attempt_task: asyncio.Future | None = None
        self._watch: asyncio.Task | None = None
        self._closing = False

    @property
    def alive(self) -> bool:
        return self.conn is not None

    async def get(self) -> asyncssh.SSHClientConnection:
        while True:
            if self.conn is not None:
                return self.conn
            if self._attempt_task is None or self._attempt_task.done():
                self._attempt_task = asyncio.ensure_future(self._attempt())
                self._attempt_task.add_done_callback(_retrieve)
            try:
                return await asyncio.shield(self._attempt_task)
            except SshError as exc:
                raise exc.copy() from None

    def mark_lost(self, conn: asyncssh.SSHClientConnection | None = None) -> None:
        """A reader saw the connection fail: drop it so the next :meth:`get` reconnects."""
        if self.conn is None or (conn is not None and conn is not self.conn):
            return
        old, self.conn = self.conn, None
        self.next_at = asyncio.get_running_loop().time() + self.settings.delay(1)
        old.abort()

    async def _attempt(self) -> asyncssh.SSHClientConnection:
        loop = asyncio.get_running_loop()
        wait = self.next_at - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        check: HostKeyCheck | None = None
        try:
            conn, check = await self._connect()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            err = describe_error(
                exc, self.who, self.where, check if check is not None else self._check, self._key_facts(exc)
            )
            self.failures += 1
            err.attempt = self.failures
            err.delay = self.settings.delay(self.failures)
            self.next_at = loop.time() + err.delay
            raise err from None
        self.failures = 0
        self.connects += 1
        self.conn = conn
        self.server_version = str(conn.get_extra_info("server_version") or "")
        if check is not None and check.seen is not None and not check.seen[3] and check.accept_new:
            host, port, key, _ = check.seen
            where = f"recorded in {_short(check.recorded)}" if check.recorded else "could not be recorded"
            self.host_key_note = (
                f"; new host key {key.get_algorithm()} {key.get_fingerprint('sha256')} "
                f"for {known_hosts_name(host, port)} accepted and {where}"
            )
        if self._watch is not None:
            self._watch.cancel()
        self._watch = asyncio.ensure_future(self._watch_closed(conn))
        return conn

    _check: HostKeyCheck | None = None
    _auth: tuple[Any, Any, str | None] = ((), (), None)  # client_keys, IdentityFile, agent of the last try

    def _key_facts(self, exc: BaseException) -> KeyFacts | None:
        if not isinstance(exc, (asyncssh.PermissionDenied, asyncssh.KeyImportError)):
            return None
        return key_facts(*self._auth)

    async def _connect(self) -> tuple[asyncssh.SSHClientConnection, HostKeyCheck]:
        t, s = self.target, self.settings
        kwargs = dict(s.connect_options)
        self._auth = (
            kwargs.get("client_keys", ()),
            (),
            kwargs.get("agent_path", os.environ.get("SSH_AUTH_SOCK")),
        )
        kwargs.setdefault("config", ())  # () = ~/.ssh/config (the constructor's own default is none)
        if t.user:
            kwargs["username"] = t.user
        opts = await asyncssh.SSHClientConnectionOptions.construct(
            None, host=t.host, port=t.port if t.port else (), **kwargs
        )
        self.where = f"{opts.username}@{opts.host}:{opts.port}"
        self._auth = (
            kwargs.get("client_keys", ()),
            opts.config.get("IdentityFile", ()),
            opts.agent_path if opts.client_keys is not None else None,
        )
        files = _known_hosts_files(opts.known_hosts)
        check = self._check = HostKeyCheck(files, s.accept_new_host_key)
        extra: dict[str, Any] = {}
        if opts.known_hosts is None:  # "UserKnownHostsFile none": still refuse unknown keys
            extra["known_hosts"] = b""
        if s.keepalive_interval is not None or opts.config.get("ServerAliveInterval") is None:
            extra["keepalive_interval"] = (
                s.keepalive_interval if s.keepalive_interval is not None else DEFAULT_KEEPALIVE[0]
            )
        if s.keepalive_count_max is not None or opts.config.get("ServerAliveCountMax") is None:
            extra["keepalive_count_max"] = (
                s.keepalive_count_max if s.keepalive_count_max is not None else DEFAULT_KEEPALIVE[1]
            )
        if "encryption_algs" not in kwargs and opts.config.get("Ciphers") is None:
            extra["encryption_algs"] = _preferred_ciphers()
        timeout = s.connect_timeout or opts.connect_timeout or DEFAULT_CONNECT_TIMEOUT
        extra["connect_timeout"] = timeout
        conn = await asyncssh.connect(
            t.host,
            port=t.port if t.port else (),
            options=opts,
            client_factory=lambda: _Client(check),
            **extra,
        )
        return conn, check

    async def _watch_closed(self, conn: asyncssh.SSHClientConnection) -> None:
        try:
            await conn.wait_closed()
        except Exception:
            pass
        if self.conn is conn and not self._closing:
            self.mark_lost(conn)

    async def close(self) -> None:
        self._closing = True
        for task in (self._attempt_task, self._watch):
            if task is not None and not task.done():
                task.cancel()
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
            try:
                await wait_for(conn.wait_closed(), 2.0)
            except (TimeoutError, Exception):
                pass


def _retrieve(fut: asyncio.Future) -> None:
    if not fut.cancelled():
        fut.exception()


_POOL: dict[tuple, SharedConnection] = {}


def _key(target: SshTarget, settings: SshSettings) -> tuple:
    loop = asyncio.get_running_loop()
    opts = tuple(sorted((k, repr(v)) for k, v in settings.connect_options.items()))
    return (id(loop), target.host, target.port, target.user, settings.accept_new_host_key, opts)


def acquire(target: SshTarget, settings: SshSettings, channels: int = 0) -> SharedConnection:
    """A shared connection for ``target`` (made on first :meth:`SharedConnection.get`) with room
    for ``channels`` more long-lived channels: sshd allows ``MaxSessions`` (10) per connection,
    one is kept free for short reads, so a host with many files gets a connection per 9 channels."""
    base = _key(target, settings)
    budget = max(1, settings.max_sessions - 1)
    n = 0
    while True:
        key = (*base, n)
        shared = _POOL.get(key)
        if shared is None or shared._closing:
            shared = _POOL[key] = SharedConnection(key, target, settings)
            break
        if shared.channels + channels <= budget or channels == 0:
            break
        n += 1
    shared.refs += 1
    shared.channels += channels
    return shared


async def release(shared: SharedConnection, channels: int = 0) -> None:
    shared.refs -= 1
    shared.channels -= channels
    if shared.refs <= 0:
        if _POOL.get(shared.key) is shared:
            del _POOL[shared.key]
        await shared.close()


def pool_size() -> int:
    return len(_POOL)


def _preferred_ciphers() -> list[str]:
    """asyncssh's own ciphers, AES-GCM first (unless the user's ``Ciphers`` says otherwise).

    asyncssh puts chacha20-poly1305 first, which it runs as three cryptography calls per packet
    plus Python glue; AES-GCM is one call (and AES-NI): with 32 followed logs on one host this
    roughly halves the client's decryption cost. Both are what OpenSSH offers by default.
    """
    from asyncssh.encryption import get_default_encryption_algs

    algs = [a.decode() for a in get_default_encryption_algs()]
    first = [a for a in ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com") if a in algs]
    return first + [a for a in algs if a not in first]
