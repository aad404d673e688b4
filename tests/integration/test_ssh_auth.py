"""Authentication failures say which keys were tried, and a passphrase-protected key without an
agent says so (asyncssh's in-process server; the client side is the real one)."""

from __future__ import annotations

import shutil
import subprocess

import asyncssh
from _ci import missing
from _sources_util import Collector, append
from _ssh_util import ExecServer

from tui.core.sources.base import EventKind as K
from tui.core.sources.spec import SshTarget
from tui.core.sources.ssh.auth import KeyFacts, auth_message
from tui.core.sources.ssh.source import SshSource


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


def encrypted_key(path) -> str:
    """A passphrase-protected key as ssh-keygen writes it (OpenSSH format, bcrypt KDF)."""
    if shutil.which("ssh-keygen") is None:
        missing("ssh-keygen (openssh-client) is not installed")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret words", "-f", str(path)], check=True)
    return str(path)


async def test_named_passphrase_protected_key_without_agent_says_so(server, tmp_path):
    append(tmp_path / "a.log", "x\n")
    key = encrypted_key(tmp_path / "id_locked")
    msg = await first_error(server, tmp_path / "a.log", client_keys=[key])
    assert f"the key {key} is passphrase-protected: add it to ssh-agent (ssh-add {key})" in msg
    assert "secret" not in msg


async def test_passphrase_protected_identity_file_from_ssh_config_says_so(server, tmp_path):
    append(tmp_path / "a.log", "x\n")
    key = encrypted_key(tmp_path / "id_locked")
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"Host *\n    IdentityFile {key}\n    IdentitiesOnly yes\n")
    msg = await first_error(server, tmp_path / "a.log", client_keys=(), config=[str(cfg)])
    assert "authentication failed" in msg and f"{key} is passphrase-protected: add it to ssh-agent" in msg
    assert msg.endswith("Keys offered: none")


async def test_auth_failure_names_the_keys_tried(server, tmp_path):
    append(tmp_path / "a.log", "x\n")
    other = tmp_path / "id_other"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(other))
    msg = await first_error(server, tmp_path / "a.log", client_keys=[str(other)])
    assert f"the server accepted none of the keys offered: {other}; passwords are not used" in msg


def test_auth_message_with_an_agent_and_a_locked_key():
    keys = KeyFacts(["~/.ssh/id_a", "~/.ssh/id_b"], ["~/.ssh/id_b"], "/run/agent.sock")
    msg = auth_message("gpu1", "me@10.0.0.1:22", keys)
    assert "offered: ~/.ssh/id_a, the keys in ssh-agent (/run/agent.sock)" in msg
    assert "~/.ssh/id_b is passphrase-protected and not in the agent: add it with ssh-add" in msg
    none = auth_message("gpu1", "me@10.0.0.1:22", KeyFacts([], [], None))
    assert "no key to offer (no IdentityFile, no ~/.ssh/id_*, no ssh-agent)" in none
