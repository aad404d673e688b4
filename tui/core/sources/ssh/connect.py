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
import os
import random
from dataclasses import dataclass, field
from typing import Any

import asyncssh

from tui.core.sources.aio import wait_for
from tui.core.sources.ssh.auth import (
    HostKeyCheck,
    KeyFacts,
    SshError,
    describe_error,
    key_facts,
    known_hosts_files,
    known_hosts_name,
    short_path,
    target_text,
)
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


class _Client(asyncssh.SSHClient):
    def __init__(self, check: HostKeyCheck) -> None:
        self.check = check

    def validate_host_public_key(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        return self.check.validate(host, addr, port, key)


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
            where = f"recorded in {short_path(check.recorded)}" if check.recorded else "could not be recorded"
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
        files = known_hosts_files(opts.known_hosts)
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
