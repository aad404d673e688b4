"""Alert options shared by the live commands (watch, compare, replay, stream, export):
``--alert RULE`` (repeatable), ``--on-alert CMD`` and ``--exit-on-alert``, plus the ``alerts``
lists of specwatch.toml. See :mod:`tui.core.alerts.rules` for the rule syntax.

``--on-alert CMD`` runs ``sh -c CMD`` for every alert (firing and resolved), without waiting for
it, with the alert in its environment -- ``SPECWATCH_ALERT_RULE``, ``SPECWATCH_ALERT_SOURCE``,
``SPECWATCH_ALERT_VALUE``, ``SPECWATCH_ALERT_MESSAGE``, ``SPECWATCH_ALERT_STATE`` and
``SPECWATCH_ALERT_SUGGEST`` -- never in the command text. Its failures are reported once.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from tui.core.alerts.engine import Alert, AlertEngine, Rule, RuleError, parse_rule
from tui.core.model.sanitize import visible

EXIT_ON_ALERT = 3  # the exit status of ``stream --exit-on-alert`` when a rule fired


def add_alert_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("alerts")
    g.add_argument(
        "--alert",
        action="append",
        default=[],
        metavar="RULE",
        help="raise an alert when RULE holds: 'accept_len<2.0 for 2m' (mean over the window; "
        "'... clear=2.1': resolve only at or above 2.1), "
        "'verdict=lower', 'drift' (repeatable; adds to the alerts of specwatch.toml)",
    )
    g.add_argument(
        "--on-alert",
        metavar="CMD",
        default=None,
        help="run sh -c CMD for each alert, with SPECWATCH_ALERT_RULE/_SOURCE/_VALUE/_MESSAGE in its environment",
    )
    g.add_argument(
        "--exit-on-alert",
        action="store_true",
        help=f"stream: exit with status {EXIT_ON_ALERT} after printing the first alert (a CI gate)",
    )


class AlertCommand:
    """``--on-alert CMD``: one ``sh -c`` per alert, not waited for; failures said once."""

    def __init__(self, command: str, err: Any = None) -> None:
        self.command = command
        self.err = err
        self.running: list[subprocess.Popen] = []
        self.failed = False

    def run(self, alert: Alert) -> None:
        self.reap()
        env = dict(os.environ)
        env.update(
            SPECWATCH_ALERT_RULE=alert.rule,
            SPECWATCH_ALERT_SOURCE=alert.source,
            SPECWATCH_ALERT_VALUE="" if alert.value is None else str(alert.value),
            SPECWATCH_ALERT_MESSAGE=alert.message,
            SPECWATCH_ALERT_STATE=alert.state,
            SPECWATCH_ALERT_SUGGEST=alert.suggest or "",
        )
        try:
            proc = subprocess.Popen(
                ["sh", "-c", self.command],
                env=env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C in the terminal is for specwatch, not for it
            )
        except OSError as exc:
            self._fail(f"cannot run it: {exc.strerror or exc}")
            return
        self.running.append(proc)

    def reap(self) -> None:
        still = []
        for proc in self.running:
            rc = proc.poll()
            if rc is None:
                still.append(proc)
            elif rc != 0:
                self._fail(f"exit status {rc}")
        self.running = still

    def finish(self, timeout: float = 5.0) -> None:
        """At exit: give the commands still running ``timeout`` seconds, then leave them be."""
        for proc in self.running:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        self.reap()

    def _fail(self, why: str) -> None:
        if self.failed:
            return
        self.failed = True
        print(
            visible(f"specwatch: --on-alert command failed ({why}); later failures are not reported"),
            file=self.err or sys.stderr,
        )


@dataclass
class Alerting:
    """The alert rules of one run and what to do when one fires."""

    engine: AlertEngine
    command: AlertCommand | None = None
    exit_on_alert: bool = False
    fired: list[Alert] = field(default_factory=list)

    def handle(self, alerts: list[Alert]) -> None:
        """Runs ``--on-alert`` for each alert and remembers the firing ones."""
        for a in alerts:
            if a.state == "firing":
                self.fired.append(a)
            if self.command is not None:
                self.command.run(a)

    def finish(self) -> None:
        if self.command is not None:
            self.command.finish()


def alert_setup(args: argparse.Namespace, specs: list, command: str, config: Any = None) -> Alerting | None:
    """The rules of ``--alert`` and of specwatch.toml (``alerts`` for all sources, and the
    ``alerts`` of each config source used), or None when there are none. ``config``: the
    :class:`tui.core.sources.spec.ConfigRef` of the run (read here only when a file exists).
    A bad rule is a :class:`tui.cli.CliError` naming it."""
    from tui.cli import CliError

    rules: list[Rule] = []
    for text in getattr(args, "alert", None) or []:
        try:
            rules.append(parse_rule(text))
        except RuleError as exc:
            raise CliError(f"specwatch {command}: --alert {exc}") from None
        if rules[-1].kind == "verdict" and len(specs) != 2:
            raise CliError(f"specwatch {command}: --alert {text!r}: a verdict needs two sources (A B)")
    per_source: dict[str, list[Rule]] = {}
    settings = _settings(config, command)
    if settings is not None:  # validated when it was read
        rules += [parse_rule(t) for t in settings.alerts]
        for spec in specs:
            entry = settings.sources.get(spec.config_name) if spec.config_name else None
            if entry is not None and entry.alerts:
                per_source.setdefault(spec.name, []).extend(parse_rule(t) for t in entry.alerts)
    engine = AlertEngine(rules, per_source)
    on_alert = getattr(args, "on_alert", None)
    exit_on = bool(getattr(args, "exit_on_alert", False))
    if not engine:
        if on_alert or exit_on:
            raise CliError(
                f"specwatch {command}: --on-alert and --exit-on-alert need alert rules (--alert RULE)"
            )
        return None
    return Alerting(engine, AlertCommand(on_alert) if on_alert else None, exit_on)


def _settings(config: Any, command: str) -> Any:
    from tui.cli import CliError
    from tui.core.sources.spec import SourceSpecError, default_config_path

    if config is None:
        return None
    if config.path is None and not os.path.exists(default_config_path()):
        return None
    try:
        return config.get()
    except SourceSpecError as exc:
        raise CliError(f"specwatch {command}: {exc}") from None
