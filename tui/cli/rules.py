"""``specwatch rules [--alert RULE ...]``: a Prometheus rules file (recording rules for pooled
acceptance per instance and per group, every family; alerting rules for the project's alert
language, as far as PromQL can express it). See :mod:`tui.core.fleet.promrules`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tui.cli import CliError

HELP = "print a Prometheus rules file: pooled acceptance per instance and group, and alerts"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("rules", help=HELP, description=HELP + " (check it with promtool check rules).")
    p.add_argument(
        "--alert", action="append", metavar="RULE", help="an alert rule, e.g. 'accept_len<2.0 for 5m'"
    )
    p.add_argument(
        "--group-label", default="group", metavar="LABEL", help="the label groups are made by (default group)"
    )
    p.add_argument("--no-defaults", action="store_true", help="leave out the stuck and below-group alerts")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from tui.core.alerts.rules import RuleError, parse_rule
    from tui.core.fleet.promrules import RulesConfig, rules_file
    from tui.core.fleet.query import SelectorError, labels_ok

    try:
        labels_ok([args.group_label])
        for text in args.alert or []:
            parse_rule(text)
    except (RuleError, SelectorError) as exc:
        raise CliError(f"specwatch rules: {exc}") from None
    cfg = RulesConfig(group_label=args.group_label, defaults=not args.no_defaults)
    sys.stdout.write(rules_file(list(args.alert or []), cfg))
    return 0
