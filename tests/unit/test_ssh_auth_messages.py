"""SSH authentication failures are explained: the keys tried, an agent and a locked key (asyncssh's in-process server)."""

from __future__ import annotations

import asyncssh
from _sources_util import append
from _ssh_util import first_error

from tui.core.sources.ssh.auth import KeyFacts, auth_message


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
