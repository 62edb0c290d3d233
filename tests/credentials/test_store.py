"""The credential store: the 0600 file, the keyring through a real (in-memory) backend, and falling back between them."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import KeyringError, PasswordDeleteError

from cowork.credentials import CredentialError, CredentialInfo, CredentialStore
from cowork.testing.files import mode


class DictKeyring(KeyringBackend):
    """A real keyring backend that keeps its entries in a dict.

    It takes a required argument so that keyring's discovery, which builds every backend class without arguments,
    never picks it for code outside these tests.
    """

    priority = 1

    def __init__(self, entries: dict[tuple[str, str], str]) -> None:
        super().__init__()
        self.entries = entries

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("No such password!")


class BrokenKeyring(DictKeyring):
    """Looks usable, then fails the way a Secret Service that went away does."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringError("the Secret Service went away")


def file_store(home: Path) -> CredentialStore:
    return CredentialStore(home, backend="file")


# The file


def test_file_round_trip(tmp_path: Path) -> None:
    store = file_store(tmp_path)
    assert store.get("provider/openai") is None
    store.set("provider/openai", "sk-one")
    store.set("provider/openai", "sk-two")
    store.set("mcp/github/GITHUB_TOKEN", "ghp-x")
    assert store.get("provider/openai") == "sk-two"
    assert store.get("mcp/github/GITHUB_TOKEN") == "ghp-x"
    assert store.info == CredentialInfo("file", str(tmp_path / "auth" / "credentials.json"))
    document = json.loads((tmp_path / "auth" / "credentials.json").read_text(encoding="utf-8"))
    assert document == {"version": 1, "secrets": {"mcp/github/GITHUB_TOKEN": "ghp-x", "provider/openai": "sk-two"}}


def test_delete_and_names(tmp_path: Path) -> None:
    store = file_store(tmp_path)
    assert store.names() == []
    assert store.delete("oauth/linear") is False
    for name in ["provider/openai", "oauth/linear", "mcp/github/GITHUB_TOKEN"]:
        store.set(name, f"secret-of-{name}")
    assert store.names() == ["mcp/github/GITHUB_TOKEN", "oauth/linear", "provider/openai"]
    assert store.delete("oauth/linear") is True
    assert store.delete("oauth/linear") is False
    assert store.get("oauth/linear") is None
    assert store.names() == ["mcp/github/GITHUB_TOKEN", "provider/openai"]


def test_folder_is_0700_and_file_0600_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        file_store(tmp_path).set("provider/openai", "sk-1")
    finally:
        os.umask(previous)
    assert mode(tmp_path / "auth") == 0o700
    assert mode(tmp_path / "auth" / "credentials.json") == 0o600


def test_a_umask_that_takes_the_owner_write_bit_still_gives_0600(tmp_path: Path) -> None:
    previous = os.umask(0o277)
    try:
        file_store(tmp_path).set("provider/openai", "sk-1")
        file_store(tmp_path).set("provider/anthropic", "sk-2")
    finally:
        os.umask(previous)
    assert mode(tmp_path / "auth") == 0o700
    assert mode(tmp_path / "auth" / "credentials.json") == 0o600
    assert mode(tmp_path / "auth" / ".lock") == 0o600


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    store = file_store(tmp_path)
    for i in range(5):
        store.set(f"provider/p{i}", "s")
    store.delete("provider/p0")
    assert sorted(p.name for p in (tmp_path / "auth").iterdir()) == [".lock", "credentials.json"]


def test_a_failed_write_keeps_the_old_file_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = file_store(tmp_path)
    store.set("provider/openai", "sk-old")
    before = (tmp_path / "auth" / "credentials.json").read_bytes()

    def no_space(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_space)
    with pytest.raises(CredentialError, match=r"credentials\.json: No space left on device"):
        store.set("provider/openai", "sk-new")
    monkeypatch.undo()
    assert (tmp_path / "auth" / "credentials.json").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "auth").iterdir()) == [".lock", "credentials.json"]


def test_loose_permissions_are_tightened(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = file_store(tmp_path)
    store.set("provider/openai", "sk-secret-value")
    path = tmp_path / "auth" / "credentials.json"
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="cowork.credentials"):
        assert store.get("provider/openai") == "sk-secret-value"
    assert mode(path) == 0o600
    assert str(path) in caplog.text and "tightened" in caplog.text
    assert "sk-secret-value" not in caplog.text


def test_loose_folder_permissions_are_tightened_on_write(tmp_path: Path) -> None:
    (tmp_path / "auth").mkdir(mode=0o755)
    (tmp_path / "auth").chmod(0o755)
    file_store(tmp_path).set("provider/openai", "sk")
    assert mode(tmp_path / "auth") == 0o700


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe",
        b"[]",
        b'{"version": 1, "secrets": ["a"]}',
        b'{"version": 1, "secrets": {"a": 1}}',
        b"{}",
    ],
)
def test_a_corrupt_file_raises_naming_the_path_and_is_kept(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "auth" / "credentials.json"
    path.parent.mkdir()
    path.write_bytes(content)
    store = file_store(tmp_path)
    for call in [lambda: store.get("provider/openai"), store.names, lambda: store.set("provider/openai", "sk")]:
        with pytest.raises(CredentialError, match=str(path)):
            call()
    assert path.read_bytes() == content


def test_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "auth" / "credentials.json"
    path.parent.mkdir()
    path.write_text('{"version": 2, "secrets": {}}', encoding="utf-8")
    with pytest.raises(CredentialError, match="version 2"):
        file_store(tmp_path).get("provider/openai")


# Validation

BAD_NAMES = ["", " ", "provider/open ai", "provider/openai\n", "tab\there", "bell\x07", "x" * 201, 42]
BAD_SECRETS = ["", "a\0b", "x" * (64 * 1024 + 1), "é" * (32 * 1024 + 1), "\ud800", None]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_raise_and_change_nothing(tmp_path: Path, name: str) -> None:
    store = file_store(tmp_path)
    store.set("provider/openai", "sk")
    before = (tmp_path / "auth" / "credentials.json").read_bytes()
    for call in [lambda: store.set(name, "sk"), lambda: store.get(name), lambda: store.delete(name)]:
        with pytest.raises(ValueError, match="name"):
            call()
    assert (tmp_path / "auth" / "credentials.json").read_bytes() == before


@pytest.mark.parametrize("secret", BAD_SECRETS)
def test_bad_secrets_raise_and_change_nothing(tmp_path: Path, secret: str) -> None:
    store = file_store(tmp_path)
    store.set("provider/openai", "sk")
    before = (tmp_path / "auth" / "credentials.json").read_bytes()
    with pytest.raises(ValueError, match="secret") as raised:
        store.set("provider/openai", secret)
    assert not secret or secret[:8] not in str(raised.value)
    assert (tmp_path / "auth" / "credentials.json").read_bytes() == before


def test_limits_are_inclusive(tmp_path: Path) -> None:
    store = file_store(tmp_path)
    store.set("n" * 200, "x" * (64 * 1024))
    assert store.get("n" * 200) == "x" * (64 * 1024)


# Homes


def test_two_homes_are_isolated(tmp_path: Path) -> None:
    one, two = file_store(tmp_path / "one"), file_store(tmp_path / "two")
    one.set("provider/openai", "sk-one")
    assert two.get("provider/openai") is None
    two.set("provider/openai", "sk-two")
    assert one.get("provider/openai") == "sk-one"


def test_a_second_store_on_the_same_home_sees_the_first_ones_secret(tmp_path: Path) -> None:
    file_store(tmp_path).set("provider/openai", "sk-1")
    assert file_store(tmp_path).get("provider/openai") == "sk-1"
    entries: dict[tuple[str, str], str] = {}
    CredentialStore(tmp_path / "k", keyring_backend=DictKeyring(entries)).set("provider/openai", "sk-2")
    again = CredentialStore(tmp_path / "k", keyring_backend=DictKeyring(entries))
    assert again.get("provider/openai") == "sk-2"
    assert again.names() == ["provider/openai"]


# The keyring


def test_keyring_backend_scopes_the_service_by_home_and_indexes_names_only(tmp_path: Path) -> None:
    entries: dict[tuple[str, str], str] = {}
    store = CredentialStore(tmp_path / "one", backend="keyring", keyring_backend=DictKeyring(entries))
    other = CredentialStore(tmp_path / "two", keyring_backend=DictKeyring(entries))
    assert store.info == CredentialInfo("keyring", "keyring (test store DictKeyring)")
    store.set("provider/openai", "sk-keyring-secret")
    store.set("oauth/linear", "lin-token")
    other.set("provider/openai", "sk-other")

    service = f"cowork:{(tmp_path / 'one').resolve()}"
    assert entries == {
        (service, "provider/openai"): "sk-keyring-secret",
        (service, "oauth/linear"): "lin-token",
        (f"cowork:{(tmp_path / 'two').resolve()}", "provider/openai"): "sk-other",
    }
    assert store.get("provider/openai") == "sk-keyring-secret"
    assert store.names() == ["oauth/linear", "provider/openai"]
    auth = tmp_path / "one" / "auth"
    index = (auth / "index.json").read_text(encoding="utf-8")
    assert json.loads(index) == {"version": 1, "names": ["oauth/linear", "provider/openai"]}
    assert "sk-keyring" not in index and "lin-token" not in index
    assert mode(auth / "index.json") == 0o600
    assert not (auth / "credentials.json").exists()

    assert store.delete("oauth/linear") is True
    assert store.delete("oauth/linear") is False
    assert (service, "oauth/linear") not in entries
    assert store.names() == ["provider/openai"]


def test_auto_without_a_usable_keyring_uses_the_file(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path, keyring_backend=fail.Keyring())
    assert store.info.backend == "file"
    store.set("provider/openai", "sk")
    assert file_store(tmp_path).get("provider/openai") == "sk"


def test_a_low_priority_keyring_is_not_trusted(tmp_path: Path) -> None:
    class Weak(DictKeyring):
        priority = 0.0  # type: ignore[assignment]

    assert CredentialStore(tmp_path, keyring_backend=Weak({})).info.backend == "file"
    with pytest.raises(CredentialError, match="priority 0"):
        CredentialStore(tmp_path, backend="keyring", keyring_backend=Weak({}))


def test_auto_falls_back_to_the_file_when_the_keyring_fails(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = CredentialStore(tmp_path, keyring_backend=BrokenKeyring({}))
    assert store.info.backend == "keyring"
    with caplog.at_level(logging.WARNING, logger="cowork.credentials"):
        store.set("provider/openai", "sk-fallback-secret")
        store.set("oauth/linear", "lin")
    assert store.info.backend == "file"
    assert store.get("provider/openai") == "sk-fallback-secret"
    assert file_store(tmp_path).names() == ["oauth/linear", "provider/openai"]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "the Secret Service went away" in warnings[0].getMessage()
    assert "sk-fallback-secret" not in caplog.text


def test_keyring_backend_required_but_unusable_raises(tmp_path: Path) -> None:
    with pytest.raises(CredentialError, match="No usable OS keyring: keyring found no backend"):
        CredentialStore(tmp_path, backend="keyring", keyring_backend=fail.Keyring())


def test_keyring_backend_required_does_not_fall_back(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path, backend="keyring", keyring_backend=BrokenKeyring({}))
    with pytest.raises(CredentialError, match="could not store 'provider/openai': the Secret Service went away"):
        store.set("provider/openai", "sk")
    assert store.info.backend == "keyring"
    assert not (tmp_path / "auth" / "credentials.json").exists()


def test_file_backend_never_asks_the_keyring(tmp_path: Path) -> None:
    entries: dict[tuple[str, str], str] = {}
    store = CredentialStore(tmp_path, backend="file", keyring_backend=DictKeyring(entries))
    store.set("provider/openai", "sk")
    assert entries == {}


# Concurrency


@pytest.mark.parametrize("backend", ["file", "keyring"])
def test_concurrent_writers_lose_nothing(tmp_path: Path, backend: str) -> None:
    entries: dict[tuple[str, str], str] = {}

    def store() -> CredentialStore:
        if backend == "file":
            return file_store(tmp_path)
        return CredentialStore(tmp_path, backend="keyring", keyring_backend=DictKeyring(entries))

    stores = [store(), store()]  # two stores on one home share the lock too
    barrier = threading.Barrier(16)

    def write(i: int) -> None:
        barrier.wait()
        for j in range(5):
            stores[i % 2].set(f"provider/t{i}-{j}", f"s{i}-{j}")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = sorted(f"provider/t{i}-{j}" for i in range(16) for j in range(5))
    assert store().names() == expected
    assert all(store().get(f"provider/t{i}-{j}") == f"s{i}-{j}" for i in range(16) for j in range(5))


def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from cowork.credentials import CredentialStore\n"
        "store = CredentialStore(Path(sys.argv[1]), backend='file')\n"
        "for j in range(20): store.set(f'provider/p{sys.argv[2]}-{j}', 's')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), str(i)]) for i in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    assert file_store(tmp_path).names() == sorted(f"provider/p{i}-{j}" for i in range(4) for j in range(20))
