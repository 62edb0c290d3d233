"""A toolbox built once per test session (the real lock, from the package index; uv's cache makes reruns fast),
and tiny locks (one small package) for the tests that build, break and rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowork.toolbox import Toolbox

# One pure-Python wheel of the real lock, with its hashes: builds in about a second once uv has it cached.
TINY_LOCK = """\
et-xmlfile==2.0.0 \\
    --hash=sha256:7a91720bc756843502c3b7504c77b8fe44217c85c537d85037f0f536151b2caa \\
    --hash=sha256:dab3f4764309081ce75662649be815c4c9081e88f0837825f90fd28317d4da54
"""


@pytest.fixture(scope="session")
def built_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Cowork home whose toolbox is built from the real lock (once for the whole session)."""
    home = tmp_path_factory.mktemp("toolbox-home")
    home.chmod(0o700)
    status = Toolbox.of_home(home).ensure()
    assert status.state == "ready", status
    return home


def tiny_toolbox(root: Path, *, variant: str = "") -> Toolbox:
    """A toolbox under `root` from the tiny lock; a different `variant` is a different lock (a Cowork upgrade)."""
    lock = root.parent / f"requirements{variant}.txt"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(TINY_LOCK + (f"# {variant}\n" if variant else ""), encoding="utf-8")
    return Toolbox(root, requirements=lock, imports=("et_xmlfile",))
