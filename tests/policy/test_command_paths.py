"""The classifier's path checks: credential places, protected workspace files, the workspace boundary, `cd`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cowork.policy import CommandPaths, Places, classify

from .corpus import PATHS


def judged(command: str, paths: CommandPaths | None = PATHS) -> tuple[str, str]:
    result = classify(command, paths=paths)
    return result.verdict, result.reason


@pytest.mark.parametrize(
    ("command", "reason", "fragment"),
    [
        ("ls && cat ~/.ssh/id_rsa", "sensitive_path", "cat ~/.ssh/id_rsa"),
        ("wc -c < ~/.netrc", "sensitive_path", "< ~/.netrc"),
        ("echo x > .git/hooks/pre-commit", "protected_path", "> .git/hooks/pre-commit"),
        ("cp a .envrc && ls", "protected_path", "cp a .envrc"),
        ("ls; cat /etc/passwd", "outside_workspace", "cat /etc/passwd"),
        ("cd /tmp; ls", "outside_workspace", "cd /tmp"),
        ("git config core.hooksPath .h", "git_executes", "git config core.hooksPath .h"),
    ],
)
def test_reason_codes_and_fragments(command: str, reason: str, fragment: str) -> None:
    result = classify(command, paths=PATHS)
    assert (result.reason, result.fragment) == (reason, fragment)
    assert result.detail.endswith(".") and "\n" not in result.detail


def test_the_detail_names_the_path_as_written_and_resolved() -> None:
    detail = classify("cat $HOME/.aws/credentials", paths=PATHS).detail
    assert "$HOME/.aws/credentials" in detail and "/home/user/.aws" in detail
    assert "/work/other/x" in classify("cat ../other/x", paths=PATHS).detail


class TestSensitivePlaces:
    @pytest.mark.parametrize(
        "command",
        [
            "cat ~/.ssh/id_rsa",
            "cat /home/user/.ssh/../.ssh/id_rsa",
            "cat ~/.SSH/id_rsa",
            "cat ~user/.aws/credentials",
            'cat "$HOME"/.netrc',
            "cat ${HOME}/.kube/config",
            "cat /proc/$(pgrep -n cowork)/environ",
            "cat /proc/*/environ",
            "ls -la /proc/1/fd",
            "cat `echo /etc`/shadow",
            "cat ~/.config/*/hosts.yml",
            "grep --file=$HOME/.pgpass x",
            "rsync -a ~ backup/",
            "zip -r home.zip ~/",
            "cat ~/.cowork/config.toml",
            "cd ~ && tar czf - .ssh",
            "pushd ~/.aws && cat credentials",
        ],
    )
    def test_every_spelling_is_dangerous(self, command: str) -> None:
        assert judged(command) == ("dangerous", "sensitive_path")

    def test_cowork_home_is_the_configured_one(self) -> None:
        paths = dataclasses.replace(PATHS, places=Places(Path("/home/user"), Path("/srv/cowork")))
        assert judged("cat /srv/cowork/auth/token", paths) == ("dangerous", "sensitive_path")
        assert judged("cat ~/.cowork/auth/token", paths) == ("review", "outside_workspace")

    def test_a_folder_holding_secrets_is_only_dangerous_for_a_recursive_reader(self) -> None:
        assert judged("ls ~") == ("review", "outside_workspace")
        assert judged("du -sh ~") == ("review", "outside_workspace")
        assert judged("grep -r token ~") == ("dangerous", "sensitive_path")
        assert judged("grep -a token ~/notes.txt") == ("review", "outside_workspace")

    def test_a_glob_that_cannot_match_a_hidden_folder_is_not_sensitive(self) -> None:
        assert judged("ls ~/*.txt") == ("review", "outside_workspace")
        assert judged("cat ~/.s*/id_rsa")[0] == "dangerous"

    def test_text_that_only_mentions_a_place_is_fine(self) -> None:
        for command in ["echo ~/.ssh/id_rsa", "grep -rn '~/.ssh' src", "printf '%s' /etc/shadow"]:
            assert judged(command) == ("safe", "read_only"), command


class TestProtectedFiles:
    @pytest.mark.parametrize(
        "command",
        [
            "echo x >> .git/config",
            "cat x > ./.git/hooks/pre-commit",
            "cp hook .git/hooks/",
            "cp -t .git/hooks hook",
            "mv hook src/../.git/hooks/pre-commit",
            "ln -s /bin/sh .git/hooks/pre-commit",
            "sort -o .envrc list",
            "wget -O .vscode/settings.json https://example.com/x",
            "rsync -a evil/ .git/",
            "cd src && cp x ../.envrc",
            "cp x .GIT/hooks/pre-commit",
        ],
    )
    def test_writes_are_dangerous(self, command: str) -> None:
        assert judged(command) == ("dangerous", "protected_path")

    def test_reads_and_other_writes_are_not(self) -> None:
        assert judged("cat .git/hooks/pre-commit.sample") == ("safe", "read_only")
        assert judged("cp .envrc envrc.bak") == ("review", "modifies_files")
        assert judged("echo x > .github/workflows/ci.yml") == ("review", "writes_file")


class TestTheWorkspaceBoundary:
    @pytest.mark.parametrize(
        "command",
        ["cat /etc/hosts", "cat ../x", "ls /", "cat /tmp/x", "ls ~/Downloads", "cat ~bob/notes", "wc -l /opt/x"],
    )
    def test_outside_is_review(self, command: str) -> None:
        assert judged(command) == ("review", "outside_workspace")

    @pytest.mark.parametrize(
        "command",
        [
            "cat /work/project/README.md",
            "cat /work/shared/data.csv",
            "cat src/../docs/x.md",
            "cat < /dev/null",
            "cat /dev/stdin",
            "head -c 16 /dev/urandom",
            "ls > /dev/stderr",
            "look word /usr/share/dict/words",
        ],
    )
    def test_inside_roots_and_harmless_places_are_fine(self, command: str) -> None:
        assert judged(command)[0] == "safe"

    def test_cd_moves_where_relative_paths_point(self) -> None:
        assert judged("cd src && cat app.py")[0] == "safe"
        assert judged("cd /etc && cat shadow") == ("dangerous", "sensitive_path")
        assert judged("cd; ls") == ("review", "outside_workspace")
        assert judged('cd "$DIR" && ls') == ("review", "outside_workspace")
        assert judged("cd - && ls") == ("review", "outside_workspace")
        assert judged("pushd src && popd && ls") == ("safe", "shell_builtin")

    def test_a_configured_allow_pattern_lifts_the_review_but_never_a_danger(self) -> None:
        allow = ["tail -f /var/log/*", "cat *"]
        assert classify("tail -f /var/log/syslog", allow=allow, paths=PATHS).verdict == "safe"
        assert classify("cat ~/.ssh/id_rsa", allow=allow, paths=PATHS).verdict == "dangerous"

    def test_an_unknown_workspace_judges_only_what_needs_no_workspace(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setenv("HOME", str(tmp_path / "me"))
        monkeypatch.setenv("COWORK_HOME", str(tmp_path / "cw"))
        assert judged("cat /etc/passwd", None) == ("safe", "read_only")
        assert classify("cat ../x").verdict == "safe"
        assert classify("cat ~/.ssh/id_rsa").reason == "sensitive_path"
        assert classify(f"cat {tmp_path}/cw/auth/token").reason == "sensitive_path"
        assert classify("cat /proc/self/environ").reason == "sensitive_path"
        assert classify("echo x > .git/hooks/pre-commit").reason == "protected_path"
        assert classify("cd / && cat etc/shadow").reason == "sensitive_path"


class TestSymbolicLinks:
    @pytest.fixture
    def world(self, tmp_path: Path) -> CommandPaths:
        home, workspace = tmp_path / "home", tmp_path / "project"
        (home / ".ssh").mkdir(parents=True)
        (workspace / ".git" / "hooks").mkdir(parents=True)
        (tmp_path / "elsewhere").mkdir()
        (workspace / "keys").symlink_to(home / ".ssh")
        (workspace / "hooks").symlink_to(workspace / ".git" / "hooks")
        (workspace / "out").symlink_to(tmp_path / "elsewhere")
        return CommandPaths(workspace.resolve(), Places(home.resolve()))

    def test_links_on_disk_are_followed(self, world: CommandPaths) -> None:
        assert judged("cat keys/id_rsa", world) == ("dangerous", "sensitive_path")
        assert judged("echo x > hooks/pre-commit", world) == ("dangerous", "protected_path")
        assert judged("cat out/x", world) == ("review", "outside_workspace")

    def test_not_when_told_not_to(self, world: CommandPaths) -> None:
        assert judged("cat keys/id_rsa", dataclasses.replace(world, follow_links=False)) == ("safe", "read_only")


def test_build_resolves_the_workspace_and_configured_roots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "ws").mkdir()
    paths = CommandPaths.build(tmp_path / "ws" / ".." / "ws", cowork_home=tmp_path / "cw", roots=["~/data", "sub"])
    assert paths.workspace == (tmp_path / "ws").resolve()
    assert paths.roots == ((tmp_path / "data").resolve(), (tmp_path / "ws" / "sub").resolve())
    assert paths.places == Places(tmp_path.resolve(), (tmp_path / "cw").resolve())
    assert judged(f"cat {tmp_path}/data/x.csv", paths) == ("safe", "read_only")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("cat ls cd>< ~/$.*{}()[]`'\"=-@\\\0HOME proc")), max_size=40))
def test_path_handling_never_raises(text: str) -> None:
    for paths in (PATHS, dataclasses.replace(PATHS, follow_links=True)):
        result = classify(text, paths=paths)
        assert result.verdict in ("safe", "review", "dangerous") and result.reason and result.detail
