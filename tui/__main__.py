"""``python -m tui`` and the ``specwatch`` command (``[project.scripts]`` runs :func:`run`): the
stop signals are taken first (:func:`tui.take_signals`, already by ``tui/__init__.py`` under
``python -m tui``), then ``main()`` is imported and run."""

import tui


def run() -> int:
    """The program: the signals first, then everything else."""
    tui.take_signals()
    from tui.cli import main

    return main()


if __name__ == "__main__":
    raise SystemExit(run())
