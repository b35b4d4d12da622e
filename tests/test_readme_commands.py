"""The README's shell commands work when pasted in order on a fresh clone (``make test-all``).

Every command of the README's ``bash`` blocks before "A Ray cluster" runs, in order, in one shell
on a fresh ``git clone`` of this checkout's HEAD, starting with ``make run`` (which creates the
clone's own ``.venv``).  Left out, each for a stated reason: ``make test`` (it is this suite) and
commands joining a Ray cluster at ``--address`` (``tests/test_ray_cluster.py`` starts one).
"""
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (pattern, why) of the commands the test leaves out
LEFT_OUT = [(r"\bmake test\b", "the test suite itself"),
            (r"--address", "needs a running Ray cluster (tests/test_ray_cluster.py)")]


def readme_commands(text: str) -> list[str]:
    """The logical shell commands (``\\`` continuations joined) of the ``bash`` blocks before
    the section "A Ray cluster", comments kept, left-out ones dropped."""
    text = text[:text.index("## A Ray cluster")]
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n", " ", block)
        for line in joined.splitlines():
            code = line.split("#")[0] if not line.lstrip().startswith("python -c") else line
            if not code.strip():
                continue
            if any(re.search(pattern, code) for pattern, _ in LEFT_OUT):
                continue
            commands.append(line.strip())
    return commands


def test_readme_commands_are_found():
    commands = readme_commands((ROOT / "README.md").read_text())
    assert commands[0].startswith("make run")
    assert any(c.startswith("gradcode train") for c in commands)
    assert any(c.startswith("gradcode reproduce all") for c in commands)
    assert not any("--address" in c or c.startswith("make test") for c in commands)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_readme_commands_run_in_order_on_a_fresh_clone(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to clone the checkout")
    clone = tmp_path / "gradcode"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    commands = readme_commands((clone / "README.md").read_text())
    script = "set -euo pipefail\n" + "\n".join(
        f"echo {shlex.quote('+ ' + c[:80])} >&2\n{c}" for c in commands)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTEST"))}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if ".venv" not in p)
    p = subprocess.run(["bash", "-c", script], cwd=clone, env=env, capture_output=True,
                       text=True, timeout=3300)
    assert p.returncode == 0, f"{p.stderr[-4000:]}\n{p.stdout[-2000:]}"
    for folder in ("runs/sim", "runs/tune", "runs/one", "runs/all", "runs/cnn", "runs/msgc"):
        assert (clone / folder).is_dir(), folder
    assert (clone / "runs/all/claims.md").is_file()
