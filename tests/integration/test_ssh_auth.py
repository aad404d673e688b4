"""Authentication failures say which keys were tried, and a passphrase-protected key without an
agent says so (asyncssh's in-process server; the client side is the real one)."""

from __future__ import annotations

import shutil
import subprocess

from _ci import missing
from _sources_util import append
from _ssh_util import first_error


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
