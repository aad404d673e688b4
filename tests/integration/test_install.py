"""An installed specwatch finds its themes and sample logs wherever it is installed: a wheel built
from this tree, installed with ``pip install --target DIR`` and ``pip install --user``, run from
``/`` (no checkout nearby), and the same package zipped.

The wheel is built once (``--no-deps --no-build-isolation --no-index``: the build tools and the
dependencies are installed already) from a copy of what the build reads, so the checkout gets no
``build/`` directory from this test.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest
from _ci import missing
from _tmux_util import capture, quit_and_wait, wait_screen

ROOT = Path(__file__).parent.resolve().parents[1]
BUILD_INPUTS = ["setup.py", "pyproject.toml", "README.md", "MANIFEST.in", "tui", "themes", "sample_logs"]
THEMES = ["specwatch-dark.toml", "specwatch-high-contrast.toml", "specwatch-light.toml"]
LIST_RESOURCES = (
    "import tui, tui.resources as r\n"
    "print(tui.__file__)\n"
    "print(' '.join(f.name for f in r.listing(r.themes(), '.toml')))\n"
    "print(' '.join(f.name for f in r.listing(r.sample_logs(), '.log')))\n"
)


def pip(*args: str, env: dict[str, str] | None = None) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONUSERBASE", "SPECWATCH_SAMPLES")
    }
    return env | extra


def run_python(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=120, cwd="/", env=env
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    try:
        import wheel as _  # noqa: F401  (bdist_wheel, for the build without isolation)
    except ImportError:
        missing("the wheel package is not installed (pip install -e '.[test]' brings it)")
    base = tmp_path_factory.mktemp("build")
    src = base / "src"
    src.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    for name in BUILD_INPUTS:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=skip)
        else:
            shutil.copy2(path, src / name)
    for stale in ("themes", "sample_logs"):  # copies a build may have left in the tree
        shutil.rmtree(src / "tui" / "resources" / stale, ignore_errors=True)
    pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(base / "dist"), str(src))
    (built,) = (base / "dist").glob("specwatch-*.whl")
    return built


@pytest.fixture(scope="module")
def target(wheel, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("target")
    pip("install", "--no-deps", "--no-index", "--target", str(where), str(wheel))
    return where


def test_the_wheel_ships_the_repository_folders(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for theme in (ROOT / "themes").glob("*.toml"):
        assert f"tui/resources/themes/{theme.name}" in names
    for log in (ROOT / "sample_logs").glob("*.log"):
        assert f"tui/resources/sample_logs/{log.name}" in names


def test_target_install_summarises_a_shipped_sample_and_lists_the_themes(target):
    env = clean_env(PYTHONPATH=str(target))
    sample = target / "tui" / "resources" / "sample_logs" / "ab_a.log"
    out = run_python(["-m", "tui", "summary", "--json", str(sample)], env)
    assert out.returncode == 0, out.stderr
    assert '"records": 1524' in out.stdout
    listed = run_python(["-c", LIST_RESOURCES], env)
    assert listed.returncode == 0, listed.stderr
    where, themes, samples = listed.stdout.splitlines()
    assert Path(where).is_relative_to(target)
    assert themes.split() == THEMES
    assert "sglang_eagle3_restart.log" in samples.split()


def test_zipped_install_finds_the_themes_and_samples(target, tmp_path):
    archive = tmp_path / "specwatch.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted((target / "tui").rglob("*")):
            if path.is_file() and path.suffix != ".so" and "__pycache__" not in path.parts:
                z.write(path, path.relative_to(target).as_posix())
    listed = run_python(["-c", LIST_RESOURCES], clean_env(PYTHONPATH=str(archive)))
    assert listed.returncode == 0, listed.stderr
    where, themes, samples = listed.stdout.splitlines()
    assert where.startswith(str(archive))
    assert themes.split() == THEMES and "ab_a.log" in samples.split()


def test_user_install_finds_the_themes_and_samples(wheel, tmp_path):
    if sys.prefix != sys.base_prefix:
        pytest.skip("a virtual environment has no user site-packages for pip install --user")
    base = tmp_path / "userbase"
    env = clean_env(PYTHONUSERBASE=str(base))
    pip("install", "--user", "--no-deps", "--no-index", str(wheel), env=env)
    listed = run_python(["-c", LIST_RESOURCES], env)
    assert listed.returncode == 0, listed.stderr
    where, themes, samples = listed.stdout.splitlines()
    assert Path(where).is_relative_to(base)
    assert themes.split() == THEMES and "sglang_eagle3_restart.log" in samples.split()


def test_target_install_runs_the_demo_from_the_root_directory(target, tmp_path):
    if shutil.which("tmux") is None:
        missing("tmux is not installed")
    name = f"specwatch-install-{uuid.uuid4().hex[:8]}"
    exit_file = tmp_path / "exit"
    script = (
        f"cd / && unset COLUMNS LINES SPECWATCH_SAMPLES && PYTHONPATH={shlex.quote(str(target))} "
        f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path / 'xdg'))} TERM=xterm-256color "
        f"{shlex.quote(sys.executable)} -m tui; echo EXIT=$? > {shlex.quote(str(exit_file))}; sleep 60"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "45", script], check=True)
    try:
        screen = wait_screen(name, r"replaying 20×")
        assert "broken" in screen and "fixed" in screen and "B − A" in screen, capture(name)
        assert quit_and_wait(name, exit_file) == "EXIT=0"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
