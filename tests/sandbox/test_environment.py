"""`command_environment`: the minimal set, the user's names and globs, the user's values, and nothing else."""

from __future__ import annotations

from cowork.config import EnvironmentConfig
from cowork.sandbox import command_environment

SOURCE = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "USER": "u",
    "LOGNAME": "u",
    "SHELL": "/bin/bash",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_TIME": "en_GB.UTF-8",
    "TERM": "xterm",
    "TZ": "Europe/Paris",
    "TMPDIR": "/tmp/u",
    "PWD": "/home/u/elsewhere",
    "EDITOR": "vim",
    "SSH_AUTH_SOCK": "/run/user/1000/ssh-agent",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "DATABASE_URL": "postgres://u:secret@h/db",
    "OPENAI_API_KEY": "sk-secret",
    "COWORK_TOKEN": "cw_secret",
    "HTTPS_PROXY": "http://u:secret@proxy:3128",
    "JAVA_HOME": "/opt/java",
    "NODE_ENV": "test",
    "NODE_OPTIONS": "--max-old-space-size=4096",
    "path": "lower-case is another variable",
    "BASH_FUNC_f%%": "() { echo pwned; }",
}


def test_only_the_minimal_set_by_default() -> None:
    assert command_environment(EnvironmentConfig(), SOURCE) == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "USER": "u",
        "LOGNAME": "u",
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "LC_TIME": "en_GB.UTF-8",
        "TERM": "xterm",
        "TZ": "Europe/Paris",
        "TMPDIR": "/tmp/u",
    }


def test_names_and_globs_the_user_allows_and_values_the_user_sets() -> None:
    settings = EnvironmentConfig(allow=["JAVA_HOME", "NODE_*", "MISSING"], set={"CI": "1", "TZ": "UTC"})
    env = command_environment(settings, SOURCE)
    assert {k: env[k] for k in ("JAVA_HOME", "NODE_ENV", "NODE_OPTIONS", "CI", "TZ")} == {
        "JAVA_HOME": "/opt/java",
        "NODE_ENV": "test",
        "NODE_OPTIONS": "--max-old-space-size=4096",
        "CI": "1",
        "TZ": "UTC",
    }
    assert "MISSING" not in env and "path" not in env


def test_an_exported_shell_function_never_passes_even_when_allowed() -> None:
    env = command_environment(EnvironmentConfig(allow=["BASH_FUNC_*", "PATH"]), SOURCE | {"PATH": "() { :; }"})
    assert "BASH_FUNC_f%%" not in env and "PATH" not in env
