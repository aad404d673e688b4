"""Options before the command word: where ``_route`` finds the command (never in an option's value)."""

from __future__ import annotations

import pytest

from tui.cli import ALIASES, COMMANDS, CliError, _route

KNOWN = {name for name, _ in COMMANDS} | set(ALIASES)


@pytest.mark.parametrize(
    ("argv", "routed"),
    [
        (["--json", "summary", "a.log"], ["summary", "--json", "a.log"]),
        (["--format", "markdown", "summary", "a.log"], ["summary", "--format", "markdown", "a.log"]),
        (["--format=json", "summary", "a.log"], ["summary", "--format=json", "a.log"]),
        (["--no-follow", "stream", "a.log"], ["stream", "--no-follow", "a.log"]),
        (["--alert", "drift", "stream", "a.log"], ["stream", "--alert", "drift", "a.log"]),
        (["--alert", "drift", "a.log"], ["watch", "--alert", "drift", "a.log"]),
        (["--alert", "summary", "a.log"], ["watch", "--alert", "summary", "a.log"]),  # a value
        (["--ale", "drift", "a.log"], ["watch", "--ale", "drift", "a.log"]),  # a prefix, as argparse reads it
        (["--alert", "x<1", "--", "-odd.log"], ["watch", "--alert", "x<1", "--", "-odd.log"]),
        (["summary", "a.log", "--json"], ["summary", "a.log", "--json"]),
        (["--help"], ["--help"]),
    ],
)
def test_the_command_word_past_leading_options(argv, routed):
    assert _route(argv, KNOWN) == routed


def test_a_mistyped_command_past_options_gets_the_hint():
    with pytest.raises(CliError, match="did you mean 'summary'"):
        _route(["--json", "sumary", "a.log"], KNOWN)
