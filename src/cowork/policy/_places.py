"""Places that matter to security: credential locations no tool may touch, and workspace files that programs
execute later (protected: read-only in the sandbox, writes always ask).

One list, shared by the path check of the file tools (`PathPolicy`), the sandbox (which masks sensitive places
and keeps protected ones read-only), and the command classifier (which makes a command that names them
`dangerous`).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "GIT_EXECUTABLE_CONFIG",
    "PROTECTED_IN_WORKSPACE",
    "SENSITIVE_IN_HOME",
    "SENSITIVE_SYSTEM",
    "Places",
    "git_key_executes",
]

SENSITIVE_IN_HOME: tuple[str, ...] = (
    # SSH, GPG, password managers, keyrings
    ".ssh",
    ".gnupg",
    ".password-store",
    ".local/share/keyrings",
    ".config/op",
    ".vault-token",
    # Cloud and cluster credentials
    ".aws",
    ".azure",
    ".oci",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".config/containers/auth.json",
    ".terraform.d/credentials.tfrc.json",
    ".s3cfg",
    ".boto",
    ".config/rclone",
    # Network, forge and package registry tokens
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".config/hub",
    ".pypirc",
    ".npmrc",
    ".yarnrc.yml",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pgpass",
    ".my.cnf",
    # Browser profiles (cookies, saved passwords)
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    "snap/firefox",
    "snap/chromium",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox",
    "Library/Keychains",
    "Library/Cookies",
    # Shell histories (typed passwords and tokens end up there)
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
)
"""Credential locations under the user's home directory (relative to it)."""

SENSITIVE_SYSTEM: tuple[str, ...] = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh/ssh_host_*_key",
    "/run/secrets",
    "/var/run/secrets",
    "/proc/*/environ",
    "/proc/*/mem",
    "/proc/*/root",
    "/proc/*/cwd",
    "/proc/*/fd",
    "/proc/*/map_files",
    "/proc/*/task/*/environ",
    "/proc/*/task/*/mem",
    "/proc/*/task/*/root",
    "/proc/*/task/*/cwd",
    "/proc/*/task/*/fd",
    "/proc/kcore",
)
"""System places with secrets (other processes' environments: the server's API keys). Globs: `*` is one name."""

PROTECTED_IN_WORKSPACE: tuple[str, ...] = (
    ".cowork",
    ".git/config",
    ".git/hooks",
    ".git/info",
    ".git/modules",
    ".git/commondir",
    ".git/config.worktree",
    ".gitmodules",
    ".envrc",
    ".vscode",
    ".idea",
    ".devcontainer",
    ".husky",
    ".pre-commit-config.yaml",
    ".mcp.json",
    ".claude",
    ".cursor",
)
"""Workspace files that programs run or obey later, outside the sandbox (git hooks and config, direnv, editor
tasks, dev containers, Cowork's own workspace config): a command writing them could run code unconfined."""

GIT_EXECUTABLE_CONFIG: tuple[str, ...] = (
    "core.fsmonitor",
    "core.hookspath",
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "core.worktree",
    "sequence.editor",
    "credential.helper",
    "credential.*.helper",
    "diff.external",
    "diff.*.command",
    "diff.*.textconv",
    "difftool.*.cmd",
    "merge.*.driver",
    "mergetool.*.cmd",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "gpg.program",
    "gpg.*.program",
    "pager.*",
    "alias.*",
    "include.path",
    "includeif.*.path",
    "protocol.*.allow",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "uploadpack.packobjectshook",
    "url.*.insteadof",
    "http.proxy",
    "ssh.variant",
    "browser.*.cmd",
    "web.browser",
    "instaweb.httpd",
    "sendemail.*",
    "submodule.*.update",
)
"""Git settings whose value git executes (or that redirect what it executes or where it connects)."""


def git_key_executes(key: str, value: str | None = None) -> bool:
    """Whether setting git config `key` (case-insensitive section and name) can make git run a program.

    An `alias.*` only does when its value starts with `!`; when the value is unknown, it might.
    """
    key = key.lower()
    if key.startswith("alias."):
        return value is None or value.lstrip().startswith("!")
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in GIT_EXECUTABLE_CONFIG)


def _casefold_within(path: str, root: str) -> bool:
    # Case-insensitive file systems (macOS, Windows) make ~/.SSH the same folder as ~/.ssh: match either way.
    p, r = path.casefold(), root.casefold().rstrip(os.sep)
    return p == r or p.startswith(r + os.sep)


@dataclass(frozen=True)
class Places:
    """Sensitive and protected places for one user and one Cowork home; paths are compared fully resolved."""

    user_home: Path
    cowork_home: Path | None = None

    @classmethod
    def current(cls, cowork_home: Path | None = None) -> Places:
        return cls(Path.home().resolve(), cowork_home.resolve() if cowork_home is not None else None)

    def sensitive_roots(self) -> list[Path]:
        """Every sensitive place without a glob, resolved (what the sandbox masks and the file tools refuse)."""
        roots = [self.user_home / rel for rel in SENSITIVE_IN_HOME]
        roots += [Path(p) for p in SENSITIVE_SYSTEM if "*" not in p]
        if self.cowork_home is not None:
            roots.append(self.cowork_home)
        return roots

    def sensitive(self, path: Path) -> str | None:
        """Why `path` (absolute, resolved) is a credential location, or None."""
        text = str(path)
        if self.cowork_home is not None and _casefold_within(text, str(self.cowork_home)):
            return f"{path} is inside Cowork's own home {self.cowork_home} (its token, database and credentials)"
        for rel in SENSITIVE_IN_HOME:
            root = self.user_home / rel
            if _casefold_within(text, str(root)):
                where = "holds" if text.casefold() == str(root).casefold() else f"is in {root}, which holds"
                return f"{path} {where} credentials"
        for pattern in SENSITIVE_SYSTEM:
            if "*" in pattern:
                depth = pattern.count("/")
                head = "/".join(text.split("/")[: depth + 1])
                if fnmatch.fnmatchcase(head, pattern):
                    return f"{path} is under {pattern}, which exposes secrets of other processes or the system"
            elif _casefold_within(text, pattern):
                where = "holds" if text.casefold() == pattern.casefold() else f"is in {pattern}, which holds"
                return f"{path} {where} secrets"
        return None

    @staticmethod
    def protected(path: Path, workspace: Path) -> str | None:
        """Why `path` (absolute, resolved) is a protected workspace file, or None."""
        try:
            rel = path.relative_to(workspace).as_posix()
        except ValueError:
            return None
        if rel == ".git":
            return ".git is the repository git runs from; replacing it can plant hooks"
        for name in PROTECTED_IN_WORKSPACE:
            if rel.casefold() == name.casefold() or rel.casefold().startswith(name.casefold() + "/"):
                return f"{name} is run or obeyed by programs outside the sandbox (git, direnv, editors, Cowork)"
        return None
