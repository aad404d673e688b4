"""SSH test servers: asyncssh's own in-process server running the real command as a local
subprocess (and what its commands sent), Debian's OpenSSH sshd on 127.0.0.1 with its own keys,
config and pid file, and the first error of a source that cannot connect."""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import asyncssh
from _ci import missing
from _sources_util import Collector
from _wait import wait_until, wait_until_async

from tui.core.sources.base import EventKind as K
from tui.core.sources.ssh.connect import SshSettings
from tui.core.sources.ssh.source import SshSource
from tui.core.sources.target import SshTarget

SSHD = "/usr/sbin/sshd"
FAST_SSH = dict(
    keepalive_interval=1.0,
    keepalive_count_max=2,
    connect_timeout=3.0,
    reconnect_initial=0.1,
    reconnect_max=0.5,
    status_interval=0.2,
    settle=0.05,
)


def write_keypair(path: Path) -> asyncssh.SSHKey:
    key = asyncssh.generate_private_key("ssh-ed25519")
    key.write_private_key(str(path))
    key.write_public_key(str(path) + ".pub")
    os.chmod(path, 0o600)
    return key


def known_hosts_line(host: str, port: int, key: asyncssh.SSHKey) -> str:
    return f"[{host}]:{port} {key.export_public_key('openssh').decode().strip()}\n"


class ExecServer:
    """asyncssh server on 127.0.0.1 that runs each exec request with the local ``sh`` (the real
    ``tail``/``stat``), as sshd would. ``env`` replaces the command's environment (e.g. a PATH
    without tail); ``connections`` counts the connections accepted; ``stdout`` keeps what each
    command sent to the client; ``forwarding``: TCP forwarding (direct-tcpip) is allowed."""

    def __init__(self, tmp: Path, env: dict | None = None, *, forwarding: bool = False) -> None:
        self.tmp = tmp
        self.env = env
        self.forwarding = forwarding
        self.host_key = write_keypair(tmp / "host_key")
        self.client_key = write_keypair(tmp / "client_key")
        (tmp / "authorized_keys").write_text(self.client_key.export_public_key("openssh").decode())
        self.server = None
        self.port = 0
        self.connections = 0
        self.conns: list = []
        self.stdout: list[tuple[str, bytearray]] = []  # (command, what it wrote so far) of each exec
        self.procs: set[asyncio.subprocess.Process] = set()
        self.user: int | None = None  # run the commands as this uid (permission tests)
        # called with each command before it runs (a race made to order); when it returns an
        # awaitable, the command runs once that is done (a slow login shell on the host)
        self.before_exec = None

    async def start(self, port: int = 0) -> None:
        outer = self

        class Server(asyncssh.SSHServer):
            def connection_made(self, conn):
                outer.connections += 1
                outer.conns.append(conn)

            def connection_requested(self, dest_host, dest_port, orig_host, orig_port):
                return outer.forwarding

        self.server = await asyncssh.create_server(
            Server,
            "127.0.0.1",
            port,
            server_host_keys=[str(self.tmp / "host_key")],
            authorized_client_keys=str(self.tmp / "authorized_keys"),
            process_factory=self._exec,
            encoding=None,
        )
        self.port = self.server.sockets[0].getsockname()[1]

    async def _exec(self, process: asyncssh.SSHServerProcess) -> None:
        if self.before_exec is not None:
            made = self.before_exec(process.command or "")
            if inspect.isawaitable(made):
                await made
        local = await asyncio.create_subprocess_shell(
            process.command or "true",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
            cwd="/" if self.user else str(self.tmp),
            start_new_session=True,
            **({"user": self.user} if self.user else {}),
        )
        self.procs.add(local)
        sent = bytearray()
        self.stdout.append((process.command or "", sent))

        async def copy(src: asyncio.StreamReader, dst, record: bytearray | None = None) -> None:
            while True:
                data = await src.read(65536)
                if not data or process.is_closing():
                    return
                if record is not None:
                    record += data
                try:
                    dst.write(data)
                    await dst.drain()
                except (OSError, asyncssh.Error):
                    return

        try:
            pumps = asyncio.gather(
                copy(local.stdout, process.stdout, sent),
                copy(local.stderr, process.stderr),
                return_exceptions=True,
            )
            closed = asyncio.ensure_future(process.wait_closed())
            await asyncio.wait({pumps, closed}, return_when=asyncio.FIRST_COMPLETED)
            if pumps.done() and not process.is_closing():
                code = await local.wait()
                process.exit(code)
            pumps.cancel()
            closed.cancel()
        except Exception:
            pass
        finally:
            if local.returncode is None:
                try:
                    os.killpg(local.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                await local.wait()
            self.procs.discard(local)

    async def stop(self) -> None:
        """Like a crashed host: the listener and every connection go away at once."""
        if self.server is not None:
            self.server.close()
            for c in self.conns:
                c.abort()
            self.conns = []
            await self.server.wait_closed()
            self.server = None
        for p in list(self.procs):
            if p.returncode is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        await wait_until_async(lambda: not self.procs, what="the exec handlers to reap their processes")

    def known_hosts(self, key: asyncssh.SSHKey | None = None) -> Path:
        path = self.tmp / "known_hosts"
        path.write_text(known_hosts_line("127.0.0.1", self.port, key or self.host_key))
        return path

    def settings(self, **overrides) -> SshSettings:
        opts = dict(
            config=None,
            known_hosts=str(self.known_hosts()),
            client_keys=[str(self.tmp / "client_key")],
            agent_path=None,
        )
        opts.update(overrides.pop("connect_options", {}))
        return SshSettings(**{**FAST_SSH, **overrides}, connect_options=opts)


# -- OpenSSH sshd --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require_sshd() -> None:
    if not os.access(SSHD, os.X_OK) or shutil.which("ssh-keygen") is None:
        missing(f"{SSHD} or ssh-keygen is missing: apt-get install openssh-server")


class Sshd:
    """Debian's sshd on 127.0.0.1:PORT, with its own host key, authorized key, config and pid."""

    def __init__(self, d: Path) -> None:
        self.d = d
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test-host", "-f", str(d / "host_ed25519")],
            check=True,
        )
        subprocess.run(
            [
                "ssh-keygen",
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "test-client",
                "-f",
                str(d / "client_ed25519"),
            ],
            check=True,
        )
        shutil.copy(d / "client_ed25519.pub", d / "authorized_keys")
        os.chmod(d / "authorized_keys", 0o600)
        self.config = d / "sshd_config"
        self.config.write_text(f"""Port {self.port}
ListenAddress 127.0.0.1
HostKey {d}/host_ed25519
PidFile {d}/sshd.pid
AuthorizedKeysFile {d}/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
LogLevel VERBOSE
SetEnv HOME={d}/remote_home
""")
        # The sessions' HOME is a folder of this server's, not the account's real one: the login
        # shell then reads no ~/.bashrc of the machine running the tests. Such a file can be slow
        # or hang (pyenv's rehash waits up to 60 s for a lock left behind when kill() ends a
        # session during it), and the remote side of the tests is a clean account, not the
        # developer's.
        (d / "remote_home").mkdir()
        os.makedirs("/run/sshd", exist_ok=True)
        os.chmod("/run/sshd", 0o755)
        subprocess.run([SSHD, "-t", "-f", str(self.config)], check=True)

    @property
    def host_key_line(self) -> str:
        return (
            f"[127.0.0.1]:{self.port} "
            + " ".join((self.d / "host_ed25519.pub").read_text().split()[:2])
            + "\n"
        )

    def start(self) -> None:
        log = open(self.d / "sshd.log", "ab")
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(self.config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )

        def greets() -> bool:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.settimeout(1.0)
                    return s.recv(64).startswith(b"SSH-")
            except OSError:
                return False

        wait_until(greets, what="sshd's greeting", show=lambda: (self.d / "sshd.log").read_text()[-2000:])

    def kill(self) -> None:
        """The listener and its per-connection processes (children), as in a crash."""
        if self.proc is None:
            return
        pids = _children(self.proc.pid)
        for pid in [self.proc.pid, *pids]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self.proc = None

    def stop(self) -> None:
        self.kill()


def _children(pid: int) -> list[int]:
    """All descendants of ``pid`` (from /proc)."""
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def user_home(
    home: Path, sshd: Sshd, alias: str = "logbox", user: str = "root", port: int | None = None
) -> Path:
    """A user's ~/.ssh as on a real machine: config with a Host alias, the key and known_hosts.
    Called again for the same home, it adds another alias (e.g. to ``port``, a proxy to sshd)."""
    ssh = home / ".ssh"
    ssh.mkdir(parents=True, exist_ok=True)
    os.chmod(ssh, 0o700)
    shutil.copy(sshd.d / "client_ed25519", ssh / "id_logbox")
    os.chmod(ssh / "id_logbox", 0o600)
    port = port or sshd.port
    with open(ssh / "config", "a") as f:
        f.write(f"""Host {alias}
    HostName 127.0.0.1
    Port {port}
    User {user}
    IdentityFile ~/.ssh/id_logbox
    IdentitiesOnly yes
""")
    key = " ".join((sshd.d / "host_ed25519.pub").read_text().split()[:2])
    with open(ssh / "known_hosts", "a") as f:
        f.write(f"[127.0.0.1]:{port} {key}\n")
    return home


class BlackHoleProxy:
    """A TCP proxy on 127.0.0.1 to ``target``. While ``hole`` is set it stops forwarding: the
    connections open then stay silent for good (their bytes are swallowed, no FIN, no RST), as
    behind a dead route; connections made once it is cleared are forwarded again."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.hole = False
        self.port = 0
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._conn, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _conn(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        self.writers.append(cw)
        dead = [self.hole]
        if dead[0]:
            while await cr.read(65536):  # swallowed
                pass
            return
        sr, sw = await asyncio.open_connection("127.0.0.1", self.target)
        self.writers.append(sw)

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                while True:
                    data = await r.read(65536)
                    if not data:
                        break
                    dead[0] = dead[0] or self.hole
                    if not dead[0]:
                        w.write(data)
                        await w.drain()
            except (OSError, asyncio.CancelledError):
                pass
            if not dead[0]:
                w.close()

        await asyncio.gather(pipe(cr, sw), pipe(sr, cw))

    async def stop(self) -> None:
        for w in self.writers:
            w.close()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


async def first_error(srv: ExecServer, path, **connect_options) -> str:
    src = SshSource(
        SshTarget("127.0.0.1", str(path), "u", srv.port),
        "remote",
        settings=srv.settings(connect_options=connect_options),
        idle_after=None,
    )
    async with Collector(src) as c:
        await c.wait_event(K.ERROR)
    err = [e for e in c.events if e.kind == K.ERROR][0]
    assert err.data["fatal"] is True and not c.lines
    return err.message


def sent(srv: ExecServer) -> bytes:
    """All the server's commands sent to the client, one command after another."""
    return b"".join(out for _, out in srv.stdout)


async def listed(srv: ExecServer, n: int) -> None:
    """``n`` more listings of the directory sent by the remote side (its lister loop): the
    follower has had ``n`` looks at the directory since this call."""

    def listings() -> int:
        return sum(len(re.findall(rb"(?m)^\S+ E$", out)) for cmd, out in srv.stdout)

    until = listings() + n
    await wait_until_async(lambda: listings() >= until, what=f"{n} more listings")
