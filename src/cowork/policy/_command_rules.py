"""The command rules of the shell classifier: data tables of commands, wrappers and argument checks.

A rule looks at one simple command's words (wrappers already stripped by `unwrap`) and returns outcomes:
findings (a verdict, a stable reason code and a sentence), commands nested in its arguments to judge in their own
right (`xargs rm`, `find -exec rm ;`), and shell text it runs, to parse recursively (`bash -c`, `eval`, `ssh`).

Long because it is data: one table entry per command family, each with its argument checks.
"""

from __future__ import annotations

import base64
import codecs
import posixpath
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ._places import git_key_executes

__all__ = [
    "COMMAND_VARIABLES",
    "NETWORK_FETCHERS",
    "SEVERITY",
    "Arg",
    "Context",
    "Finding",
    "Nested",
    "Outcome",
    "Script",
    "Stdin",
    "Unwrapped",
    "Verdict",
    "command_name",
    "git_environment",
    "has_rule",
    "judge",
    "literal_output",
    "operands_and_values",
    "unwrap",
    "write_target",
]

Verdict = Literal["safe", "review", "dangerous"]
Stdin = Literal["terminal", "pipe", "network", "file"]
SEVERITY: dict[str, int] = {"safe": 0, "review": 1, "dangerous": 2}


@dataclass(frozen=True)
class Arg:
    """One word of a simple command: its text after quote removal, and where it was written."""

    text: str
    start: int = 0
    end: int = 0
    dynamic: bool = False
    """Its value is only known at run time (a parameter expansion, a command substitution, an unresolved glob)."""
    fetches: bool = False
    """It holds a command or process substitution that downloads from the network (`<(curl …)`, `$(wget …)`)."""


@dataclass(frozen=True)
class Context:
    """Where a command's standard input comes from, and whether a tool appends its arguments (xargs, find)."""

    stdin: Stdin = "terminal"
    stdin_text: str | None = None
    """The input, when it is known: a here-document, a here-string, or what an upstream `echo` prints."""
    bulk: bool = False


@dataclass(frozen=True)
class Finding:
    verdict: Verdict
    reason: str
    detail: str


@dataclass(frozen=True)
class Nested:
    """Words that are a command of their own (`xargs CMD`, `find -exec CMD ;`)."""

    args: tuple[Arg, ...]
    bulk: bool = False


@dataclass(frozen=True)
class Script:
    """Shell text a command runs (`bash -c`, `eval`, `ssh host CMD`), to parse and judge recursively."""

    text: str
    bulk: bool = False


Outcome = Finding | Nested | Script
Rule = Callable[[str, Sequence[Arg], Context], list[Outcome]]


def _safe(reason: str, detail: str) -> Finding:
    return Finding("safe", reason, detail)


def _review(reason: str, detail: str) -> Finding:
    return Finding("review", reason, detail)


def _danger(reason: str, detail: str) -> Finding:
    return Finding("dangerous", reason, detail)


def command_name(word: str) -> str:
    """The name rules are looked up by: the basename, lower-cased (case-insensitive file systems run `RM` as rm)."""
    return posixpath.basename(word.rstrip("/")).lower() or word


def _texts(args: Iterable[Arg]) -> list[str]:
    return [a.text for a in args]


def _shown(args: Iterable[Arg]) -> str:
    return " ".join(shlex.quote(t) if t else "''" for t in _texts(args))


# --- Options ------------------------------------------------------------------------------------------------------


@dataclass
class _Options:
    short: set[str] = field(default_factory=set)
    long: set[str] = field(default_factory=set)
    values: dict[str, list[str]] = field(default_factory=dict)
    operands: list[Arg] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(n in self.short if len(n) == 1 else n in self.long for n in names)


def _options(
    args: Sequence[Arg],
    *,
    value: str = "",
    optional: str = "",
    long_value: Iterable[str] = (),
    stop_at_operand: bool = False,
) -> _Options:
    """getopt-style parsing of `args[1:]`: clustered short flags, `--long[=value]`, `--` ending the options.

    `value`: short options whose value is attached or the next word; `optional`: short options whose value can only
    be attached (`sed -i.bak`); `long_value`: long options whose value may be the next word.
    """
    opts, longs, i = _Options(), frozenset(long_value), 1
    while i < len(args):
        text, i = args[i].text, i + 1
        if text == "--":
            opts.operands.extend(args[i:])
            break
        if text.startswith("--"):
            name, eq, val = text[2:].partition("=")
            opts.long.add(name)
            if not eq and name in longs and i < len(args):
                val, i = args[i].text, i + 1
            opts.values.setdefault(name, []).append(val)
        elif text.startswith("-") and len(text) > 1:
            i = _short_cluster(text, args, i, value, optional, opts)
        else:
            opts.operands.append(args[i - 1])
            if stop_at_operand:
                opts.operands.extend(args[i:])
                break
    return opts


def operands_and_values(
    args: Sequence[Arg], *, value: str = "", long_value: Iterable[str] = ()
) -> tuple[list[Arg], dict[str, list[str]]]:
    """The operands of `args[1:]` and the values of its options, parsed getopt-style as the rules do."""
    opts = _options(args, value=value, long_value=long_value)
    return opts.operands, opts.values


def _short_cluster(text: str, args: Sequence[Arg], i: int, value: str, optional: str, opts: _Options) -> int:
    for k, ch in enumerate(text[1:], start=2):
        opts.short.add(ch)
        if ch in value or ch in optional:
            rest = text[k:]
            if not rest and ch in value and i < len(args):
                rest, i = args[i].text, i + 1
            opts.values.setdefault(ch, []).append(rest)
            break
    return i


# --- Paths --------------------------------------------------------------------------------------------------------

_SYSTEM_DIRS = frozenset(
    {
        "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt", "/opt",
        "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/usr", "/var", "/usr/bin", "/usr/lib",
        "/usr/local", "/usr/sbin", "/usr/share", "/var/lib", "/Applications", "/Library", "/System", "/Users",
        "/Volumes", "/private",
    }
)  # fmt: skip
_SYSTEM_FILE_DIRS = (
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/sys", "/proc", "/root", "/var/lib",
    "/System", "/Library", "/private/etc",
)  # fmt: skip
_DEVICES = (
    "/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/disk", "/dev/rdisk", "/dev/mmcblk", "/dev/mem",
    "/dev/kmem", "/dev/port", "/dev/dm-", "/dev/md", "/dev/mapper/", "/dev/loop", "/dev/root", "/dev/sr",
    "/dev/zd", "/dev/bus/",
)  # fmt: skip
_HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/random", "/dev/urandom"}
)
_PROFILES = frozenset(
    {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv",
        ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", "config.fish",
    }
)  # fmt: skip


def _normal(path: str) -> str:
    """`path` with `$HOME` spelled `~`, trailing `/`, `/.` and `/*` dropped and (if absolute) `..` resolved."""
    p = path.strip()
    for home in ("${HOME}", "$HOME"):
        if p == home or p.startswith(home + "/"):
            p = "~" + p[len(home) :]
    while len(p) > 1:
        if p.endswith(("/*", "/.")):
            p = p[:-2] or "/"
        elif p.endswith("/"):
            p = p[:-1]
        else:
            break
    if p.startswith("/"):
        p = posixpath.normpath(p)
        p = "/" if p == "//" else p
    return p


def is_critical(path: str) -> bool:
    """Whether deleting, moving or re-permissioning `path` would wreck the system, the home folder or the workspace."""
    p = _normal(path)
    if p in {"/", "*", ".", "..", ".*", "~"} or p in _SYSTEM_DIRS:
        return True
    if re.fullmatch(r"~[A-Za-z0-9_.-]*", p):  # ~user
        return True
    parts = [part for part in p.split("/") if part not in ("", ".")]
    return bool(parts) and all(part == ".." for part in parts)


def _is_system_file(path: str) -> bool:
    p = _normal(path)
    return any(p == d or p.startswith(d + "/") for d in _SYSTEM_FILE_DIRS)


def write_target(path: str, *, append: bool, what: str) -> Finding:
    """The finding for `what` (a redirection, tee, dd …) writing into `path`."""
    p = _normal(path)
    if p in _HARMLESS_DEVICES or p.startswith(("/dev/fd/", "/dev/pts/")):
        return _safe("discards_output", f"{what} only writes to {path}.")
    if p.startswith(_DEVICES):
        return _danger("writes_device", f"{what} writes raw data onto the device {path}, which can destroy a disk.")
    if p.startswith("/dev/"):
        return _review("writes_device", f"{what} writes to the device {path}.")
    if posixpath.basename(p) in _PROFILES:
        if append:
            return _review("modifies_shell_profile", f"{what} appends to the shell profile {path}.")
        return _danger("overwrites_shell_profile", f"{what} replaces the shell profile {path}.")
    if _is_system_file(p):
        if append:
            return _review("writes_system_file", f"{what} appends to the system file {path}.")
        return _danger("writes_system_file", f"{what} overwrites the system file {path}.")
    return _review("writes_file", f"{what} writes {path}.")


# --- Wrappers -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Wrapper:
    value: str = ""
    long_value: frozenset[str] = frozenset()
    positionals: int = 0
    assignments: bool = False
    privileged: bool = False
    numeric: bool = False


_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _Wrapper(
        value="CDgpRrTtUu",
        long_value=frozenset({"user", "group", "prompt", "chdir", "chroot", "role", "type", "other-user", "host"}),
        assignments=True,
        privileged=True,
    ),
    "doas": _Wrapper(value="uC", privileged=True),
    "run0": _Wrapper(value="uDg", long_value=frozenset({"user", "group", "chdir", "setenv", "unit"}), privileged=True),
    "pkexec": _Wrapper(long_value=frozenset({"user"}), privileged=True),
    "chroot": _Wrapper(long_value=frozenset({"userspec", "groups"}), positionals=1, privileged=True),
    "env": _Wrapper(value="uCS", long_value=frozenset({"unset", "chdir", "split-string"}), assignments=True),
    "command": _Wrapper(),
    "builtin": _Wrapper(),
    "exec": _Wrapper(value="a"),
    "nice": _Wrapper(value="n", long_value=frozenset({"adjustment"}), numeric=True),
    "nohup": _Wrapper(),
    "time": _Wrapper(value="fo", long_value=frozenset({"format", "output"})),
    "timeout": _Wrapper(value="sk", long_value=frozenset({"signal", "kill-after"}), positionals=1),
    "stdbuf": _Wrapper(value="ioe", long_value=frozenset({"input", "output", "error"})),
    "ionice": _Wrapper(value="cnpPu", long_value=frozenset({"class", "classdata", "pid", "pgid", "uid"})),
    "chrt": _Wrapper(
        value="TPD", long_value=frozenset({"sched-runtime", "sched-period", "sched-deadline"}), positionals=1
    ),
    "taskset": _Wrapper(positionals=1),
    "setsid": _Wrapper(),
    "unbuffer": _Wrapper(),
    "nocorrect": _Wrapper(),
    "noglob": _Wrapper(),
    "busybox": _Wrapper(),
}
_UV_RUN_VALUES = frozenset(
    {"with", "with-editable", "with-requirements", "python", "extra", "group", "only-group", "no-group", "package",
     "env-file", "directory", "project", "index", "default-index", "index-url", "extra-index-url", "find-links"}
)  # fmt: skip
_SUB_WRAPPERS: dict[tuple[str, str], _Wrapper] = {
    ("uv", "run"): _Wrapper(value="pw", long_value=_UV_RUN_VALUES),
    ("poetry", "run"): _Wrapper(),
    ("pipenv", "run"): _Wrapper(),
    ("pdm", "run"): _Wrapper(),
    ("hatch", "run"): _Wrapper(),
    ("rye", "run"): _Wrapper(),
    ("bundle", "exec"): _Wrapper(),
    ("conda", "run"): _Wrapper(value="np", long_value=frozenset({"name", "prefix", "cwd"})),
    ("mamba", "run"): _Wrapper(value="np", long_value=frozenset({"name", "prefix", "cwd"})),
}


def _split_assignment(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    return name, value


def _is_assignment(text: str) -> bool:
    name, eq, _ = text.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[:1].isdigit()


@dataclass(frozen=True)
class Unwrapped:
    """A simple command seen through its wrappers (`sudo`, `env`, `timeout 5` …)."""

    findings: tuple[Finding, ...]
    core: tuple[Arg, ...]
    scripts: tuple[Script, ...]


def unwrap(args: Sequence[Arg]) -> Unwrapped:
    """Strip wrappers with their options; privilege wrappers leave a finding, `env -S` a script."""
    findings: list[Finding] = []
    scripts: list[Script] = []
    core = tuple(args)
    while core and not core[0].dynamic:
        name = command_name(core[0].text)
        if name == "command" and len(core) > 1 and core[1].text.startswith("-") and set(core[1].text[1:]) & {"v", "V"}:
            break  # `command -v rm` looks a name up
        skip, wrapper = 1, _WRAPPERS.get(name)
        if wrapper is None and len(core) > 1:
            skip, wrapper = 2, _SUB_WRAPPERS.get((name, core[1].text))
        if wrapper is None:
            break
        rest, values = _skip_wrapper(core[skip:], wrapper)
        if wrapper.privileged:
            findings.append(_review("privilege_escalation", f"{name} runs a command with elevated privileges."))
        scripts.extend(Script(v) for v in values.get("S", []))
        scripts.extend(Script(v) for n, v in map(_split_assignment, values.get("=", [])) if n in COMMAND_VARIABLES)
        if not rest and not wrapper.privileged and not values.get("S"):
            findings.append(_safe("read_only", f"{name} without a command only prints information."))
        core = rest
    return Unwrapped(tuple(findings), core, tuple(scripts))


def _skip_wrapper(args: Sequence[Arg], w: _Wrapper) -> tuple[tuple[Arg, ...], dict[str, list[str]]]:
    i, values = 0, dict[str, list[str]]()
    while i < len(args) and not args[i].dynamic:
        t = args[i].text
        if t == "--":
            i += 1
            break
        if w.assignments and _is_assignment(t):
            values.setdefault("=", []).append(t)
            i += 1
        elif t == "-" or (w.numeric and t[1:].isdigit() and t[:1] == "-"):
            i += 1
        elif t.startswith("--"):
            name, eq, _ = t[2:].partition("=")
            i += 2 if name in w.long_value and not eq else 1
        elif t.startswith("-") and len(t) > 1:
            opts = _Options()
            i = _short_cluster(t, args, i + 1, w.value, "", opts)
            for key, vals in opts.values.items():
                values.setdefault(key, []).extend(vals)
        else:
            break
    return tuple(args[i + w.positionals :]), values


# --- Tables -------------------------------------------------------------------------------------------------------

_READ_ONLY = frozenset(
    """ls ll la dir vdir cat tac head tail wc grep egrep fgrep zgrep rg ag ack fd fdfind pwd echo printf which
    whereis whoami id groups users who w uname uptime printenv file stat du df free ps pgrep pidof lsof tree less
    more most bat batcat exa eza cut tr paste join column nl fold fmt expand unexpand rev comm diff diff3 colordiff
    cmp sdiff md5sum sha1sum sha224sum sha256sum sha384sum sha512sum shasum b2sum cksum sum base32 base64 basenc
    od hexdump strings jq gron basename dirname realpath readlink seq yes expr bc factor numfmt tput locale
    nproc lscpu lsblk lsusb lspci lsmod getconf arch tty man info whatis apropos tldr cal ncal look namei logname
    zcat zless bzcat xzcat zstdcat top htop btop vmstat iostat mpstat nm objdump readelf size lsattr getfacl
    journalctl dmesg fc-list cloc tokei scc type""".split()
)
_SHELL_BUILTINS = frozenset(
    """cd pushd popd dirs export unset set shopt local declare typeset readonly shift return exit break continue
    wait jobs true false : test [ read getopts hash umask ulimit let help history sleep disown clear caller
    complete compgen compopt mapfile readarray""".split()
)
_DEV_TOOLS = frozenset(
    """pytest py.test tox nox mypy pyright pyre flake8 pylint pyflakes pycodestyle pydocstyle bandit vulture jest
    vitest mocha ava tsc rspec phpunit ctest shellcheck hadolint yamllint markdownlint actionlint""".split()
)
_MODIFIES = frozenset(
    """mkdir touch rmdir ln rename mktemp chattr setfacl patch split csplit zip 7z rar unrar mkfifo mknod
    vim vi nvim nano emacs code subl ed""".split()
)
_NETWORK = frozenset(
    """ping dig host nslookup traceroute tracepath mtr nc ncat netcat socat telnet ftp http https xh aria2c httpie
    whois nmap""".split()
)
NETWORK_FETCHERS = frozenset({"curl", "wget", "fetch", "http", "https", "xh", "aria2c", "nc", "ncat", "socat"})
_REMOTE = frozenset({"scp", "sftp", "rsync", "mosh", "rclone", "sshpass"})
_SYSTEM = frozenset(
    """mount umount swapon swapoff modprobe insmod rmmod useradd userdel usermod groupadd groupdel passwd chpasswd
    visudo service launchctl timedatectl hostnamectl localectl ufw iptables ip6tables nft""".split()
)
_FORMATS = frozenset(
    """mke2fs mkswap mkdosfs mkntfs mkexfatfs fdisk sfdisk cfdisk gdisk sgdisk cgdisk parted gparted wipefs
    blkdiscard newfs""".split()
)
_SHREDS = frozenset({"shred", "srm", "wipe"})
_SHUTDOWN = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "posh"})
_CODE_FLAGS: dict[str, tuple[str, ...]] = {
    "python": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
}
_DEV_TARGETS = frozenset(
    """test tests check checks lint lints typecheck type-check types build compile vet clippy fmt-check
    format-check format:check lint:check ci verify""".split()
)


def _interpreter(name: str) -> str | None:
    """The language of an interpreter name (`python3.12` → python), or None."""
    for lang, prefixes in (
        ("python", ("python", "pypy")),
        ("node", ("node", "nodejs")),
        ("perl", ("perl",)),
        ("ruby", ("ruby",)),
        ("php", ("php",)),
    ):
        if name.startswith(prefixes) and (name.rstrip("0123456789.") in prefixes):
            return lang
    return None


# --- Generic findings ---------------------------------------------------------------------------------------------


def _read_only(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    return [_safe("read_only", f"{name} only reads and prints.")]


def _unknown(name: str, args: Sequence[Arg]) -> list[Outcome]:
    if "/" in args[0].text:
        return [_review("runs_script", f"{args[0].text} is a program or script whose effects are unknown.")]
    return [_review("unknown_command", f"{name} is not a command the classifier knows.")]


def _dynamic(args: Sequence[Arg]) -> list[Outcome]:
    """The command name is an expansion: unknown until run time; destructive-looking arguments make it dangerous."""
    flags = [a.text for a in args[1:] if a.text.startswith("-") and not a.dynamic]
    recursive = any(f == "--recursive" or (f[1:2] != "-" and set(f[1:]) & set("rR")) for f in flags)
    if recursive and any(is_critical(a.text) for a in args[1:] if not a.dynamic):
        return [
            _danger(
                "dynamic_command",
                f"The command name {args[0].text} is only known at run time, and its arguments look like a "
                "recursive deletion of a critical folder.",
            )
        ]
    return [_review("dynamic_command", f"The command name {args[0].text} is only known at run time.")]


# --- Deleting, moving, permissions --------------------------------------------------------------------------------


def _rm(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args)
    targets = opts.operands
    critical = [a.text for a in targets if is_critical(a.text)]
    system = [a.text for a in targets if _is_system_file(a.text) and not is_critical(a.text)]
    where = f" (including {', '.join(critical + system)})" if critical or system else ""
    if opts.has("no-preserve-root"):
        return [_danger("deletes_recursively", "rm --no-preserve-root can delete the whole file system.")]
    if opts.has("r", "R", "recursive"):
        return [_danger("deletes_recursively", f"rm -r deletes folders and everything in them{where}.")]
    if ctx.bulk:
        return [_danger("deletes_in_bulk", "rm runs on every file another command lists, so what it deletes is open.")]
    if critical:
        return [_danger("deletes_broadly", f"rm deletes every file in {', '.join(critical)}.")]
    if system:
        return [_danger("deletes_system_file", f"rm deletes the system file {', '.join(system)}.")]
    if any(a.dynamic for a in targets):
        return [_review("deletes_files", "rm deletes files whose names are only known at run time.")]
    return [_review("deletes_files", f"rm deletes {_shown(targets) or 'files'}.")]


def _find(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    out: list[Outcome] = [_safe("read_only", f"{name} only lists files.")]
    i = 1
    while i < len(args):
        t = args[i].text
        if t in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and not (args[j].text == ";" or (args[j].text == "+" and args[j - 1].text == "{}")):
                j += 1
            payload = tuple(args[i + 1 : j])
            out.append(Nested(payload, bulk=True) if payload else _review("unknown_command", f"{t} has no command."))
            i = j
        elif t == "-delete":
            out.append(_danger("deletes_in_bulk", "find -delete deletes every file the search matches."))
        elif t in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            out.append(write_target(args[i + 1].text, append=False, what=f"find {t}"))
        i += 1
    return out


def _fd(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    for i, a in enumerate(args):
        if a.text in ("-x", "--exec", "-X", "--exec-batch"):
            payload = tuple(b for b in args[i + 1 :] if b.text not in (";", r"\;"))
            if not payload:
                return [_review("unknown_command", f"{name} {a.text} has no command.")]
            return [_safe("read_only", f"{name} lists files."), Nested(payload, bulk=True)]
    return [_safe("read_only", f"{name} only lists files.")]


def _xargs(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(
        args,
        value="IaEdLnPs",
        optional="eil",
        long_value={"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "max-lines", "process-slot-var"},
        stop_at_operand=True,
    )
    payload = tuple(opts.operands) or (Arg("echo"),)
    return [Nested(payload, bulk=True)]


def _mode_flags(args: Sequence[Arg], letters: str) -> tuple[bool, list[Arg]]:
    """(recursive?, operands) for chmod/chown/chgrp, whose modes can look like options (`chmod -w f`)."""
    recursive, operands, ended = False, list[Arg](), False
    for a in args[1:]:
        t = a.text
        if ended or not t.startswith("-") or t == "-":
            operands.append(a)
        elif t == "--":
            ended = True
        elif t == "--recursive":
            recursive = True
        elif t.startswith("--"):
            continue
        elif set(t[1:]) <= set(letters):
            recursive = recursive or "R" in t
        else:
            operands.append(a)  # a mode such as -w
    return recursive, operands


def _chmod(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    recursive, operands = _mode_flags(args, "RcfvhHLP")
    targets = operands[1:]
    critical = [a.text for a in targets if is_critical(a.text) or _is_system_file(a.text)]
    if recursive:
        where = f", including {', '.join(critical)}" if critical else ""
        return [
            _danger(
                "changes_permissions_recursively", f"{name} -R changes every file under the folders it is given{where}."
            )
        ]
    if critical:
        return [_danger("changes_critical_permissions", f"{name} changes {', '.join(critical)}, a critical path.")]
    return [_review("changes_permissions", f"{name} changes the permissions or owner of {_shown(targets)}.")]


def _mv(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="tS", long_value={"target-directory", "suffix"})
    directory = opts.values.get("t") or opts.values.get("target-directory")
    operands = opts.operands
    dest = directory[-1] if directory else (operands[-1].text if len(operands) > 1 else "")
    sources = operands if directory else operands[:-1]
    critical = [a.text for a in sources if is_critical(a.text) or _is_system_file(a.text)]
    if name == "mv" and critical:
        return [_danger("moves_critical_path", f"{name} moves {', '.join(critical)}, a critical path.")]
    if name == "mv" and _normal(dest) == "/dev/null":
        return [_danger("destroys_data", "mv onto /dev/null destroys the files it moves.")]
    target = write_target(dest, append=False, what=name) if dest else None
    if target is not None and target.verdict == "dangerous":
        return [target]
    return [_review("modifies_files", f"{name} {'moves' if name == 'mv' else 'copies'} files.")]


def _tee(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args)
    append = opts.has("a", "append")
    out: list[Outcome] = [_safe("read_only", "tee copies its input to its output.")]
    out += [write_target(a.text, append=append, what="tee") for a in opts.operands]
    return out


def _truncate(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="sor", long_value={"size", "reference"})
    out: list[Outcome] = []
    for a in opts.operands:
        target = write_target(a.text, append=False, what="truncate")
        out.append(
            target if target.verdict == "dangerous" else _review("truncates_file", f"truncate resizes {a.text}.")
        )
    return out or [_review("truncates_file", "truncate resizes files.")]


def _dd(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    for a in args[1:]:
        if a.text.startswith("of="):
            target = write_target(a.text[3:], append=False, what="dd")
            if target.verdict == "dangerous":
                return [target]
            return [_review("modifies_files", f"dd writes {a.text[3:]}.")]
    return [_review("modifies_files", "dd copies raw data.")]


def _shred(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    return [_danger("destroys_data", f"{name} overwrites files so they cannot be recovered.")]


def _format(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    return [_danger("formats_disk", f"{name} partitions, formats or wipes a disk.")]


# --- Processes and the system -------------------------------------------------------------------------------------


def _shutdown(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if name == "shutdown" and any(a.text == "-c" for a in args[1:]):
        return [_review("changes_system", "shutdown -c cancels a scheduled shutdown.")]
    return [_danger("shuts_down", f"{name} shuts down or restarts the machine.")]


def _init(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if any(a.text in ("0", "6", "1", "s", "S") for a in args[1:]):
        return [_danger("shuts_down", f"{name} switches the run level, which halts, reboots or isolates the machine.")]
    return [_review("changes_system", f"{name} controls the init system.")]


_SYSTEMCTL_POWER = frozenset(
    {
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "suspend",
        "hibernate",
        "hybrid-sleep",
        "soft-reboot",
        "emergency",
        "rescue",
    }
)
_SYSTEMCTL_READ = frozenset(
    """status list-units list-unit-files list-timers list-sockets list-jobs list-dependencies is-active is-enabled
    is-failed is-system-running show cat help get-default""".split()
)


def _systemctl(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="tpHMn", long_value={"type", "property", "host", "machine", "lines", "output"})
    sub = opts.operands[0].text if opts.operands else ""
    if sub in _SYSTEMCTL_POWER:
        return [_danger("shuts_down", f"systemctl {sub} powers off, restarts or suspends the machine.")]
    if not sub or sub in _SYSTEMCTL_READ or opts.has("version", "help"):
        return [_safe("read_only", "systemctl only reports.")]
    return [_review("changes_services", f"systemctl {sub} changes system services.")]


def _kill(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    rest = [a.text for a in args[1:]]
    if rest[:1] in (["-l"], ["-L"]):
        return [_safe("read_only", "kill -l lists signals.")]
    if rest[:1] in (["-s"], ["-n"]):
        rest = rest[2:]
    elif rest and rest[0].startswith("-") and rest[0] != "--":
        rest = rest[1:]
    pids = [p for p in rest if p != "--"]
    if any(p in ("1", "-1") for p in pids):
        return [_danger("kills_all_processes", "kill on process 1 or -1 kills init or every process you can signal.")]
    return [_review("kills_process", f"kill signals process {', '.join(pids) or '(none given)'}.")]


def _killall(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if name == "killall5":
        return [_danger("kills_all_processes", "killall5 signals every process on the system.")]
    opts = _options(args, value="usgtPFUOoe", long_value={"user", "signal", "group", "parent", "session", "euid"})
    patterns = [a.text for a in opts.operands]
    broad = not patterns or any(p in (".", ".*", "", "^", "$", "*") for p in patterns)
    if broad and (patterns or opts.has("u", "user", "euid", "U")):
        return [_danger("kills_all_processes", f"{name} matches every process (or every process of a user).")]
    return [_review("kills_process", f"{name} signals the processes matching {', '.join(patterns) or 'its options'}.")]


def _crontab(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="uc")
    if opts.has("r", "remove"):
        return [_danger("deletes_crontab", "crontab -r deletes every scheduled job of the user.")]
    if opts.has("l", "list"):
        return [_safe("read_only", "crontab -l lists scheduled jobs.")]
    return [_review("changes_system", "crontab changes scheduled jobs.")]


def _date(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if any(a.text in ("-s", "--set") or a.text.startswith("--set=") for a in args[1:]):
        return [_review("changes_system", "date -s sets the system clock.")]
    return _read_only(name, args, ctx)


def _hostname(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if _options(args, value="F", long_value={"file"}).operands or any(a.text in ("-F", "--file") for a in args):
        return [_review("changes_system", "hostname with a name renames the machine.")]
    return _read_only(name, args, ctx)


def _sysctl(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if any("=" in a.text or a.text in ("-w", "--write", "-p", "--load", "--system") for a in args[1:]):
        return [_review("changes_system", "sysctl changes kernel settings.")]
    return _read_only(name, args, ctx)


# --- Text tools with write modes ----------------------------------------------------------------------------------

_SED_COMMAND = re.compile(r"(^|[;\n{}])\s*(\d+|\$|/[^/]*/)?(,(\d+|\$|/[^/]*/))?\s*!?\s*[ewW](\s|$)")
_SED_SUBST_FLAG = re.compile(r"s(.).*\1.*\1[gpiImM0-9]*[ew]")


def _sed(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="efl", optional="i", long_value={"expression", "file", "line-length"})
    if opts.has("i", "in-place"):
        return [_review("modifies_files", f"{name} -i edits files in place.")]
    scripts = opts.values.get("e", []) + opts.values.get("expression", [])
    if not scripts and not opts.has("f", "file") and opts.operands:
        scripts = [opts.operands[0].text]
    if any(_SED_COMMAND.search(s) or _SED_SUBST_FLAG.search(s) for s in scripts):
        return [_review("runs_code", f"The {name} script runs commands or writes files (e, w).")]
    if opts.has("f", "file"):
        return [_review("runs_script", f"{name} -f runs a script file.")]
    return _read_only(name, args, ctx)


_AWK_RISKY = re.compile(r"system\s*\(|getline|\|\s*\"|\"\s*\||\bprintf?\b[^;{}]*>|close\s*\(|fflush")


def _awk(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="fvFiEe", long_value={"file", "assign", "field-separator", "include", "source"})
    if opts.has("f", "file", "E"):
        return [_review("runs_script", f"{name} -f runs a program file.")]
    if "inplace" in opts.values.get("i", []) + opts.values.get("include", []):
        return [_review("modifies_files", f"{name} -i inplace edits files in place.")]
    programs = opts.values.get("e", []) + opts.values.get("source", [])
    programs += [opts.operands[0].text] if opts.operands and not programs else []
    if any(_AWK_RISKY.search(p) for p in programs):
        scanned = [o for p in programs for o in _scan_code(name, p, ctx)]
        return [_review("runs_code", f"The {name} program runs commands or writes files."), *scanned]
    return _read_only(name, args, ctx)


def _sort(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="ktoST", long_value={"key", "field-separator", "output", "buffer-size"})
    outputs = opts.values.get("o", []) + opts.values.get("output", [])
    if outputs:
        return [write_target(outputs[-1], append=False, what="sort -o")]
    return _read_only(name, args, ctx)


def _uniq(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    """uniq and xxd: a second operand is the output file."""
    operands = _options(args, value="fsw" if name == "uniq" else "cglsoCn").operands
    if len(operands) > 1:
        return [write_target(operands[1].text, append=False, what="uniq")]
    return _read_only(name, args, ctx)


_TAR_COMMANDS = (
    "--to-command",
    "--checkpoint-action",
    "--use-compress-program",
    "--info-script",
    "--new-volume-script",
)


def _tar(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    runs = _option_commands(args, _TAR_COMMANDS, ("-I", "-F"))
    if runs:
        return [_review("runs_code", "tar runs a command of its own (--to-command, --checkpoint-action …)."), *runs]
    letters = "".join(a.text.lstrip("-") for a in args[1:2]) + "".join(
        a.text[1:] for a in args[2:] if a.text.startswith("-") and not a.text.startswith("--")
    )
    longs = {a.text for a in args[1:] if a.text.startswith("--")}
    if ("t" in letters or "--list" in longs) and not (set(letters) & set("xcruA") or longs & {"--extract", "--create"}):
        return [_safe("read_only", "tar -t lists an archive.")]
    return [_review("modifies_files", "tar creates or extracts files.")]


def _option_commands(args: Sequence[Arg], longs: Sequence[str], shorts: Sequence[str] = ()) -> list[Outcome]:
    """Shell text given to options that run a command (`--to-command=CMD`, `--pre CMD`, `-I CMD`)."""
    out: list[Outcome] = []
    for i, a in enumerate(args[1:], start=1):
        name, eq, value = a.text.partition("=")
        if name in longs or name in shorts:
            value = value if eq else (args[i + 1].text if i + 1 < len(args) else "")
            out.append(Script(value.removeprefix("exec=")))
    return out


def _hyperfine(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="wrmMpcsSLne", long_value={"prepare", "cleanup", "setup", "shell", "export-json"})
    scripts = [*opts.values.get("p", []), *opts.values.get("c", []), *opts.values.get("s", [])]
    scripts += [v for key in ("prepare", "cleanup", "setup") for v in opts.values.get(key, [])]
    scripts += [a.text for a in opts.operands]
    return [_safe("read_only", f"{name} times commands."), *(Script(t, bulk=ctx.bulk) for t in scripts)]


def _rg(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    runs = _option_commands(args, ("--pre",))
    if runs:
        return [_review("runs_code", f"{name} --pre runs a command on every file."), *runs]
    return _read_only(name, args, ctx)


def _unzip(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if any(a.text in ("-l", "-t", "-v", "-Z", "-p") for a in args[1:]):
        return _read_only(name, args, ctx)
    return [_review("modifies_files", f"{name} extracts files.")]


def _compress(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args)
    if opts.has("c", "stdout", "l", "list", "t", "test", "h", "help", "V", "version") or not opts.operands:
        return _read_only(name, args, ctx)
    return [_review("modifies_files", f"{name} replaces files with their (de)compressed form.")]


def _network(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    value = "oeHdXuAFTwbcKmrxEyYzC" if name == "curl" else "oOPaTeUt"
    opts = _options(args, value=value, long_value={"output", "output-document"})
    outputs = [v for key in ("o", "output", "output-document") for v in opts.values.get(key, [])]
    if name == "wget":
        outputs += opts.values.get("O", [])
    for out in outputs:
        target = write_target(out, append=False, what=name)
        if out != "-" and target.verdict == "dangerous":
            return [target]
    return [_review("network_access", f"{name} talks to the network.")]


# --- Interpreters and nested shell text ---------------------------------------------------------------------------

_DELETES_IN_CODE = re.compile(
    r"rmtree|os\.remove|os\.unlink|os\.rmdir|removedirs|\.unlink\s*\(|\bunlink\s*\(|\brmdir\s*\(|rm_rf|rm_r\b"
    r"|FileUtils\.rm|File\.delete|rmSync|rmdirSync|unlinkSync|fs\.rm\b|fs\.promises\.rm|\bremove_tree\b"
)
_SHELL_IN_CODE = re.compile(
    r"os\.system|os\.popen|os\.exec|subprocess|Popen|check_output|check_call|child_process|execSync|spawnSync"
    r"|\bexec\s*\(|\bsystem\s*\(|`|%x|shell_exec|passthru|proc_open|\bpopen\b|Open3|IO\.popen|\bspawn\s*\("
)
_STRING_LITERAL = re.compile(r"'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"|`([^`]*)`")
_LIST_LITERAL = re.compile(r"\[\s*((?:(?:'[^'\\\n]*'|\"[^\"\\\n]*\")\s*,\s*)*(?:'[^'\\\n]*'|\"[^\"\\\n]*\"))\s*,?\s*\]")


def _scan_code(lang: str, code: str, ctx: Context) -> list[Outcome]:
    """Judge a program in another language by a simple scan: deleting calls, and the shell text it hands out."""
    deletes = _DELETES_IN_CODE.search(code)
    if deletes:
        return [_danger("code_deletes_files", f"The {lang} code deletes files ({deletes.group(0).strip('(. ')}).")]
    out: list[Outcome] = [_review("runs_code", f"{lang} runs code.")]
    if _SHELL_IN_CODE.search(code):
        for match in _STRING_LITERAL.finditer(code):
            literal = next(g for g in match.groups() if g is not None)
            if literal.strip():
                out.append(Script(literal, bulk=ctx.bulk))
        for match in _LIST_LITERAL.finditer(code):
            words = [next(g for g in m.groups() if g is not None) for m in _STRING_LITERAL.finditer(match[1])]
            out.append(Script(" ".join(shlex.quote(w) for w in words), bulk=ctx.bulk))
    return out


def _from_stdin(name: str, lang: str, ctx: Context) -> list[Outcome]:
    """An interpreter reading its program from standard input."""
    if ctx.stdin == "network":
        return [_danger("pipe_to_shell", f"{name} runs whatever is downloaded from the network, unseen.")]
    if ctx.stdin_text is not None:
        return [Script(ctx.stdin_text, bulk=ctx.bulk)] if lang == "shell" else _scan_code(lang, ctx.stdin_text, ctx)
    if ctx.stdin == "pipe":
        return [_review("pipe_to_shell", f"{name} runs, as a program, whatever the previous command prints.")]
    if ctx.stdin == "file":
        return [_review("runs_script", f"{name} runs a program read from a file.")]
    return [_review("starts_interpreter", f"{name} starts an interactive interpreter.")]


def _script_file(name: str, script: Arg) -> list[Outcome]:
    if script.fetches:
        return [_danger("network_download_exec", f"{name} runs a program downloaded from the network, unseen.")]
    return [_review("runs_script", f"{name} runs the script {script.text}, whose effects are unknown.")]


def _shell(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    command_mode = stdin_mode = False
    i = 1
    while i < len(args):
        t = args[i].text
        if t in ("--", "-"):
            i += 1
            break
        if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file", "--init-command"):
            i += 2
        elif t in ("--command", "-c") or (t[:1] in "-+" and len(t) > 1 and not t.startswith("--")):
            command_mode = command_mode or t == "--command" or "c" in t[1:]
            stdin_mode = stdin_mode or "s" in t[1:]
            i += 1
        elif t.startswith("--"):
            i += 1
        else:
            break
    operands = args[i:]
    if command_mode:
        if not operands:
            return [_review("runs_script", f"{name} -c has no command.")]
        out: list[Outcome] = [Script(operands[0].text, bulk=ctx.bulk)]
        if operands[0].fetches:
            out.insert(0, _danger("network_download_exec", f"{name} -c runs text downloaded from the network."))
        return out
    if operands and not stdin_mode:
        return _script_file(name, operands[0])
    return _from_stdin(name, "shell", ctx)


_PY_DEV_MODULES = frozenset(
    {"pytest", "unittest", "mypy", "doctest", "py_compile", "compileall", "json.tool", "tabnanny", "pyflakes",
     "flake8", "pylint", "pyright", "pydoc", "site", "platform", "sysconfig", "tokenize", "ensurepip"}
)  # fmt: skip


def _python_module(name: str, module: str, rest: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if module in ("pip", "uv"):
        return _pip(module, [Arg(module), *rest], ctx)
    if module in ("ruff", "black", "isort"):
        return judge([Arg(module), *rest], ctx)
    if module in _PY_DEV_MODULES:
        return [_safe("dev_command", f"{name} -m {module} is a routine development command.")]
    if module == "venv":
        return [_review("modifies_files", f"{name} -m venv creates a virtual environment.")]
    return [_review("runs_code", f"{name} -m {module} runs a module, whose effects are unknown.")]


def _interpreted(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    lang = _interpreter(name) or name
    code_flags = _CODE_FLAGS.get(lang, ())
    i = 1
    while i < len(args):
        t = args[i].text
        if t in ("-V", "--version", "-v", "-h", "--help", "-VV") and len(args) == 2:
            return [_safe("read_only", f"{name} {t} prints information.")]
        cluster = t[:1] == "-" and t[1:2] not in ("-", "")
        code_flag = next((f for f in code_flags if t == f or (len(f) == 2 and cluster and t.endswith(f[1]))), None)
        if code_flag and i + 1 < len(args):
            return _code_argument(name, lang, args[i + 1], "i" in t[1:] and lang == "perl", ctx)
        if lang == "python" and t == "-m" and i + 1 < len(args):
            return _python_module(name, args[i + 1].text, args[i + 2 :], ctx)
        if lang == "node" and t == "--test":
            return [_safe("dev_command", "node --test runs the tests.")]
        if t == "-":
            break
        if not t.startswith("-"):
            return _script_file(name, args[i])
        i += 2 if lang == "python" and t in ("-W", "-X") else 1
    return _from_stdin(name, lang, ctx)


def _code_argument(name: str, lang: str, code: Arg, in_place: bool, ctx: Context) -> list[Outcome]:
    if code.fetches:
        return [_danger("network_download_exec", f"{name} runs code downloaded from the network, unseen.")]
    out = _scan_code(lang, code.text, ctx)
    first = out[0]
    if in_place and isinstance(first, Finding) and first.verdict != "dangerous":
        return [_review("modifies_files", f"{name} -i edits files in place."), *out[1:]]
    return out


def _eval(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    words = args[1:]
    if any(a.fetches for a in words):
        return [_danger("network_download_exec", "eval runs text downloaded from the network.")]
    out: list[Outcome] = [Script(" ".join(a.text for a in words), bulk=ctx.bulk)]
    if any(a.dynamic for a in words):
        out.insert(0, _review("dynamic_command", "eval runs text that is only known at run time."))
    return out


def _source(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if len(args) < 2:
        return [_review("runs_script", f"{name} needs a file.")]
    script = args[1]
    if script.text in ("/dev/stdin", "-", "/proc/self/fd/0"):
        return _from_stdin(name, "shell", ctx)
    if posixpath.basename(script.text) in ("activate", "activate.sh") and not script.fetches:
        return [_safe("shell_builtin", f"{name} activates a virtual environment.")]
    return _script_file(name, script)


def _trap(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    words = [a for a in args[1:] if a.text != "--"]
    if len(words) >= 2 and not words[0].text.startswith("-"):
        return [_safe("shell_builtin", "trap sets a signal handler."), Script(words[0].text, bulk=ctx.bulk)]
    return [_safe("shell_builtin", "trap lists or resets signal handlers.")]


def _alias(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    out: list[Outcome] = [_safe("shell_builtin", "alias defines a shorthand.")]
    out += [Script(a.text.partition("=")[2]) for a in args[1:] if "=" in a.text]
    return out


def _watch(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="nq", long_value={"interval"}, stop_at_operand=True)
    if not opts.operands:
        return [_safe("read_only", "watch without a command does nothing.")]
    if opts.has("x", "exec"):
        return [Nested(tuple(opts.operands))]
    return [Script(" ".join(a.text for a in opts.operands), bulk=ctx.bulk)]


def _ssh(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="BbcDEeFIiJLlmOopQRSWw", stop_at_operand=True)
    out: list[Outcome] = [_review("remote_access", f"{name} runs commands on another machine.")]
    for option in opts.values.get("o", []):
        key, _, value = option.replace("=", " ", 1).partition(" ")
        if key.lower() in ("proxycommand", "localcommand", "knownhostscommand", "remotecommand") and value.strip():
            out.append(Script(value.strip(), bulk=ctx.bulk))
    if len(opts.operands) > 1:
        out.append(Script(" ".join(a.text for a in opts.operands[1:]), bulk=ctx.bulk))
    return out


def _su(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="cgGsw", long_value={"command", "group", "shell", "whitelist-environment"})
    out: list[Outcome] = [_review("privilege_escalation", f"{name} runs commands as another user.")]
    out += [Script(c, bulk=ctx.bulk) for c in opts.values.get("c", []) + opts.values.get("command", [])]
    return out


def _declare(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    out: list[Outcome] = [_safe("shell_builtin", f"{name} only changes the shell's own state.")]
    for a in args[1:]:
        variable, value = _split_assignment(a.text)
        if variable in COMMAND_VARIABLES and value:
            out.append(Script(value, bulk=ctx.bulk))
    return out


def _command_lookup(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    return [_safe("read_only", f"{name} -v looks a command up.")]


# --- Version control ----------------------------------------------------------------------------------------------

_GIT_READ = frozenset(
    """status log diff show blame annotate rev-parse describe shortlog ls-files ls-tree ls-remote cat-file grep
    whatchanged version help name-rev merge-base rev-list for-each-ref check-ignore check-attr count-objects fsck
    var show-ref show-branch cherry range-diff verify-commit verify-tag --version --help -h""".split()
)
_GIT_CHANGE = frozenset(
    """add commit pull fetch merge rebase cherry-pick revert am apply mv rm init clone submodule worktree bisect
    notes gc prune repack format-patch archive mergetool difftool update-index update-ref commit-tree
    sparse-checkout lfs maintenance config tag remote reflog""".split()
)


def _git(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    out: list[Outcome] = []
    for i, a in enumerate(args):
        following = args[i + 1].text if i + 1 < len(args) else ""
        if a.text == "-c" and following:
            key, eq, value = following.partition("=")
            known: str | None = value if eq else ""
        elif a.text == "--config-env" and following:
            key, known = following.partition("=")[0], None
        elif a.text.startswith("--config-env="):
            key, known = a.text.removeprefix("--config-env=").partition("=")[0], None
        else:
            continue
        if key.lower() in _GIT_COMMAND_SETTINGS or (key.lower().startswith("alias.") and (known or "")[:1] == "!"):
            out.append(Script((known or "").removeprefix("!")))
        if _git_runs(key, known):
            detail = f"git {a.text.partition('=')[0]} sets {key}, a setting whose value git runs as a program."
            out.append(_danger("git_executes", detail))
    return [*out, *_git_subcommand(args, ctx)]


_GIT_COMMAND_SETTINGS = frozenset(
    {"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.hookspath", "diff.external",
     "sequence.editor", "credential.helper", "core.askpass", "gpg.program", "uploadpack.packobjectshook"}
)  # fmt: skip
"""Settings whose value is shell text git runs (judged as a command in its own right)."""
_PLAIN_PAGERS = frozenset({"", "cat", "less", "more", "less -R", "less -FRX", "true", ":"})


def _git_runs(key: str, value: str | None) -> bool:
    """Whether setting `key` to `value` (None: unknown) makes git run a program; a plain pager or editor does not."""
    lowered = key.lower()
    plain = lowered in ("core.pager", "core.editor", "sequence.editor") or lowered.startswith("pager.")
    if plain and value is not None and value.strip() in _PLAIN_PAGERS:
        return False
    return git_key_executes(key, value)


def _git_subcommand(args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    i = 1
    while i < len(args) and args[i].text.startswith("-") and args[i].text not in _GIT_READ:
        i += 2 if args[i].text in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env") else 1
    if i >= len(args):
        return [_safe("read_only", "git without a subcommand prints help.")]
    sub, rest = args[i].text, args[i:]
    rule = _GIT_RULES.get(sub)
    if rule is not None:
        return rule(sub, rest, ctx)
    if sub in _GIT_READ:
        return [_safe("read_only", f"git {sub} only reads the repository.")]
    if sub in ("filter-branch", "filter-repo"):
        return [_danger("rewrites_history", f"git {sub} rewrites the whole history of the repository.")]
    if sub in _GIT_CHANGE:
        return [_review("vcs_change", f"git {sub} changes the repository or its remotes.")]
    if sub.startswith("!") or any(a.text.startswith("alias.") for a in args[:i]):
        return [_review("runs_code", "git runs an alias or a shell command.")]
    return [_review("unknown_command", f"git {sub} is not a git command the classifier knows (it may be an alias).")]


def _git_push(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="o", long_value={"push-option", "repo", "receive-pack", "exec"})
    refspecs = [a.text for a in opts.operands[1:]]
    forced = opts.has("f", "force", "force-with-lease", "force-if-includes", "mirror") or any(
        r.startswith("+") for r in refspecs
    )
    if forced:
        return [_danger("force_push", "git push --force overwrites the remote branch, discarding commits there.")]
    if opts.has("d", "delete", "prune") or any(r.startswith(":") for r in refspecs):
        return [_danger("deletes_remote_branch", "git push deletes branches on the remote.")]
    return [_review("vcs_change", "git push publishes commits to the remote.")]


def _git_reset(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if _options(args).has("hard"):
        return [_danger("discards_changes", "git reset --hard discards every uncommitted change.")]
    return [_review("vcs_change", "git reset moves the branch or unstages changes.")]


def _git_clean(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="e", long_value={"exclude"})
    if opts.has("n", "dry-run"):
        return [_safe("read_only", "git clean -n only lists what it would delete.")]
    if opts.has("f", "force"):
        return [_danger("deletes_untracked", "git clean -f deletes untracked files, which git cannot bring back.")]
    return [_review("deletes_untracked", "git clean deletes untracked files.")]


def _discards(paths: Sequence[str], what: str) -> list[Outcome]:
    if any(p in (".", "*", ":/", ":/:", "./") or is_critical(p) for p in paths):
        return [_danger("discards_changes", f"{what} discards every uncommitted change in the working tree.")]
    return [_review("discards_changes", f"{what} discards uncommitted changes in {', '.join(paths) or 'files'}.")]


def _git_checkout(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    texts = _texts(args[1:])
    opts = _options(args, value="bBo", long_value={"conflict", "pathspec-from-file"})
    if opts.has("f", "force"):
        return [_danger("discards_changes", "git checkout --force discards uncommitted changes.")]
    if "--" in texts:
        return _discards(texts[texts.index("--") + 1 :], "git checkout --")
    if any(a.text == "." for a in opts.operands):
        return _discards(["."], "git checkout .")
    return [_review("vcs_change", "git checkout switches branches or restores files.")]


def _git_restore(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="s", long_value={"source", "pathspec-from-file"})
    if opts.has("S", "staged") and not opts.has("W", "worktree"):
        return [_review("vcs_change", "git restore --staged unstages changes.")]
    return _discards(_texts(opts.operands), "git restore")


def _git_switch(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    if _options(args, value="cC").has("f", "force", "discard-changes"):
        return [_danger("discards_changes", "git switch --discard-changes discards uncommitted changes.")]
    return [_review("vcs_change", "git switch changes the current branch.")]


def _git_stash(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    action = args[1].text if len(args) > 1 else "push"
    if action in ("list", "show"):
        return [_safe("read_only", f"git stash {action} only reads.")]
    if action == "clear":
        return [_danger("discards_changes", "git stash clear deletes every stash.")]
    return [_review("vcs_change", f"git stash {action} changes the stash.")]


_GIT_BRANCH_LIST = frozenset(
    {"l", "list", "a", "all", "r", "remotes", "v", "vv", "verbose", "show-current", "contains", "no-contains",
     "merged", "no-merged", "points-at", "sort", "format", "column", "no-column", "color", "no-color", "ignore-case"}
)  # fmt: skip


def _git_branch(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="u", long_value={"set-upstream-to", "contains", "merged", "sort", "format"})
    if opts.has("D") or (opts.has("d", "delete") and opts.has("f", "force")):
        return [_danger("deletes_branch", "git branch -D deletes a branch even if its commits are not merged.")]
    if opts.has("d", "delete", "m", "M", "move", "c", "C", "copy", "u", "set-upstream-to", "unset-upstream"):
        return [_review("vcs_change", "git branch deletes, renames or configures a branch.")]
    if opts.operands and not (opts.short | opts.long) & _GIT_BRANCH_LIST:
        return [_review("vcs_change", "git branch creates a branch.")]
    return [_safe("read_only", "git branch lists branches.")]


def _git_tag(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="mFu", long_value={"message", "file", "sort", "format", "contains"})
    if opts.has("l", "list") or not (opts.operands or opts.has("d", "delete")):
        return [_safe("read_only", "git tag lists tags.")]
    return [_review("vcs_change", "git tag creates or deletes a tag.")]


def _git_listing(read_subs: frozenset[str], what: str) -> Callable[[str, Sequence[Arg], Context], list[Outcome]]:
    def rule(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
        operands = _options(args).operands
        if not operands or operands[0].text in read_subs:
            return [_safe("read_only", f"git {sub} {what}")]
        return [_review("vcs_change", f"git {sub} {operands[0].text} changes the repository.")]

    return rule


def git_environment(assignments: Iterable[str]) -> Finding | None:
    """A `git_executes` finding when `NAME=value` words set a git setting that runs a program through the
    environment (`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`, `GIT_CONFIG_PARAMETERS`)."""
    keys: dict[str, str] = {}
    values: dict[str, str] = {}
    pairs: list[tuple[str, str | None]] = []
    for text in assignments:
        name, eq, value = text.partition("=")
        if not eq:
            continue
        if name.startswith("GIT_CONFIG_KEY_"):
            keys[name.removeprefix("GIT_CONFIG_KEY_")] = value
        elif name.startswith("GIT_CONFIG_VALUE_"):
            values[name.removeprefix("GIT_CONFIG_VALUE_")] = value
        elif name == "GIT_CONFIG_PARAMETERS":
            try:
                words = shlex.split(value)
            except ValueError:
                words = value.split()
            pairs += [(key, val if sep else None) for key, sep, val in (w.partition("=") for w in words)]
    pairs += [(key, values.get(n)) for n, key in keys.items()]
    for key, setting in pairs:
        if _git_runs(key.strip(), setting):
            detail = f"The environment sets the git setting {key.strip()}, which makes git run a program."
            return _danger("git_executes", detail)
    return None


_GIT_CONFIG_READS = (
    "get", "get-all", "get-regexp", "get-urlmatch", "get-color", "get-colorbool", "list", "l", "show-origin",
    "show-scope",
)  # fmt: skip
_GIT_CONFIG_REMOVES = ("unset", "unset-all", "rename-section", "remove-section")
_GIT_CONFIG_MODES = frozenset({"get", "set", "list", "edit", "get-color", "get-colorbool", *_GIT_CONFIG_REMOVES})
"""The subcommands of `git config` in git 2.46 and later (`git config set KEY VALUE`)."""


def _git_config(sub: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="ft", long_value={"file", "blob", "type", "default", "comment", "value", "url"})
    operands = _texts(opts.operands)
    mode = operands[0] if operands and operands[0] in _GIT_CONFIG_MODES else None
    if opts.has("e", "edit") or mode == "edit":
        detail = "git config --edit opens the settings in an editor, where any setting (hooks, a pager) can be set."
        return [_danger("git_executes", detail)]
    if opts.has(*_GIT_CONFIG_REMOVES) or mode in _GIT_CONFIG_REMOVES:
        return [_review("vcs_change", "git config removes settings.")]
    if opts.has(*_GIT_CONFIG_READS) or mode in ("get", "list", "get-color", "get-colorbool"):
        return [_safe("read_only", "git config only reads settings.")]
    if mode == "set":
        operands = operands[1:]
    if len(operands) < 2:
        return (
            [_safe("read_only", "git config only reads settings.")]
            if operands
            else [_review("vcs_change", "git config changes settings.")]
        )
    key, value = operands[0], operands[1]
    if _git_runs(key, value):
        detail = f"git config sets {key}, a setting whose value git runs as a program (or that changes what it runs)."
        return [_danger("git_executes", detail)]
    return [_review("vcs_change", f"git config sets {key}.")]


_GIT_RULES: dict[str, Callable[[str, Sequence[Arg], Context], list[Outcome]]] = {
    "push": _git_push,
    "reset": _git_reset,
    "clean": _git_clean,
    "checkout": _git_checkout,
    "restore": _git_restore,
    "switch": _git_switch,
    "stash": _git_stash,
    "branch": _git_branch,
    "tag": _git_tag,
    "remote": _git_listing(frozenset({"-v", "show", "get-url"}), "lists remotes."),
    "reflog": _git_listing(frozenset({"show", "exists"}), "shows the reflog."),
    "worktree": _git_listing(frozenset({"list"}), "lists worktrees."),
    "submodule": _git_listing(frozenset({"status", "summary", "foreach"}), "reports on submodules."),
    "config": _git_config,
}


def _gh(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    words = [a.text for a in args[1:] if not a.text.startswith("-")]
    if words[:2] in (["repo", "delete"], ["release", "delete"]):
        return [_danger("deletes_remote", f"gh {' '.join(words[:2])} deletes it on GitHub.")]
    if len(words) >= 2 and words[1] in ("view", "list", "status", "diff", "checks", "ls", "watch"):
        return [_safe("read_only", f"gh {' '.join(words[:2])} only reads.")]
    if words[:1] in (["status"], ["search"], ["browse"]) or not words:
        return [_safe("read_only", "gh only reads.")]
    return [_review("remote_access", f"gh {' '.join(words[:2])} changes things on GitHub.")]


# --- Development tools and package managers -----------------------------------------------------------------------


def _first_operand(args: Sequence[Arg]) -> tuple[str, list[Arg]]:
    for i, a in enumerate(args[1:], start=1):
        if not a.text.startswith(("-", "+")):
            return a.text, list(args[i:])
    return "", []


def _dev(name: str, detail: str) -> list[Outcome]:
    return [_safe("dev_command", f"{name} {detail} is a routine development command.".replace("  ", " "))]


_JS_READ = frozenset(
    """test t tst ls list ll la outdated view info show why explain doctor help root bin prefix whoami ping search
    --version -v -h --help""".split()
)
_JS_INSTALL = frozenset(
    """install i ci add remove rm uninstall un unlink update up upgrade link ln dedupe prune rebuild publish
    unpublish deprecate dist-tag init create patch import""".split()
)


def _js(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    sub, rest = _first_operand(args)
    if not sub and any(a.text in ("--version", "-v", "-h", "--help") for a in args[1:]):
        return _read_only(name, args, ctx)
    if sub in ("test", "t", "tst"):
        return _dev(name, "test")
    if sub in _JS_READ or (sub == "audit" and "fix" not in _texts(rest)):
        return [_safe("read_only", f"{name} {sub} only reads.")]
    if sub in _JS_INSTALL:
        return [_review("installs_packages", f"{name} {sub} installs or changes packages.")]
    if sub in ("exec", "x", "dlx", "create"):
        return [_review("runs_code", f"{name} {sub} downloads and runs a package.")]
    script = rest[1].text if sub in ("run", "run-script") and len(rest) > 1 else sub
    if script in _DEV_TARGETS or script.split(":")[0] in ("test", "lint", "typecheck", "check"):
        return _dev(name, f"run {script}" if sub in ("run", "run-script") else script)
    return [_review("runs_script", f"{name} runs the project script {script or '(none)'}, whose effects are unknown.")]


_CARGO_SAFE = frozenset(
    "test check build clippy doc bench metadata tree version search locate-project pkgid nextest".split()
)


def _cargo(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    sub, rest = _first_operand(args)
    if not sub or sub in ("help", "--version"):
        return _read_only(name, args, ctx)
    if sub in _CARGO_SAFE and "--fix" not in _texts(rest):
        return _dev(name, sub)
    if sub == "fmt" and "--check" in _texts(rest):
        return _dev(name, "fmt --check")
    if sub in ("install", "add", "remove", "update", "publish", "uninstall", "yank"):
        return [_review("installs_packages", f"cargo {sub} installs or changes packages.")]
    return [_review("runs_code", f"cargo {sub} builds or runs code, or changes files.")]


def _go(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    sub, rest = _first_operand(args)
    if sub in ("test", "vet", "build", "list", "doc", "version", "help") or (sub == "env" and "-w" not in _texts(rest)):
        return _dev(name, sub)
    if sub in ("get", "install", "mod", "work"):
        return [_review("installs_packages", f"go {sub} installs or changes modules.")]
    return [_review("runs_code", f"go {sub} runs code or changes files.")]


_PIP_READ = frozenset("list show freeze check help inspect index debug --version -V".split())


def _pip(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    sub, _ = _first_operand(args)
    if sub in _PIP_READ or not sub:
        return _read_only(name, args, ctx)
    return [_review("installs_packages", f"{name} {sub} installs or changes packages.")]


def _uv(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    sub, rest = _first_operand(args)
    if sub == "pip":
        return _pip("uv pip", rest, ctx)
    if not sub or sub in ("version", "tree", "help") or (sub == "python" and _texts(rest)[1:2] == ["list"]):
        return _read_only(name, args, ctx)
    if name == "uvx" or sub in ("tool", "x"):
        return [_review("runs_code", f"{name} downloads and runs a tool.")]
    return [_review("installs_packages", f"{name} {sub} installs packages or changes the project.")]


def _make(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    opts = _options(args, value="CfIoWlE", optional="j", long_value={"directory", "file", "makefile", "include-dir"})
    if opts.has("n", "dry-run", "just-print", "q", "question", "p", "print-data-base", "v", "version", "h", "help"):
        return _read_only(name, args, ctx)
    targets = [a.text for a in opts.operands if "=" not in a.text and not a.text.isdigit()]
    if targets and all(t in _DEV_TARGETS for t in targets):
        return _dev(name, " ".join(targets))
    return [_review("runs_build", f"{name} {' '.join(targets) or '(default target)'} runs build recipes.")]


def _formatter(fix_flags: set[str], check_flags: set[str], fixes_by_default: bool) -> Rule:
    def rule(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
        texts = set(_texts(args[1:]))
        fixes = bool(texts & fix_flags) or (fixes_by_default and not texts & check_flags)
        if name == "ruff":
            sub = _first_operand(args)[0]
            fixes = "--fix" in texts or (sub == "format" and not texts & check_flags)
        if fixes:
            return [_review("modifies_files", f"{name} rewrites source files.")]
        return [_safe("dev_command", f"{name} only checks the code.")]

    return rule


_PACKAGE_READ = frozenset(
    "list search show info policy outdated --version -v -h --help doctor config deps leaves".split()
)


def _packages(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    sub, _ = _first_operand(args)
    texts = _texts(args[1:])
    if name in ("dpkg", "rpm"):
        queries = {"-l", "-L", "-s", "-S", "-p", "--list", "--listfiles", "--status", "--search", "--query"}
        reads = any(t in queries or (name == "rpm" and t.startswith("-q")) for t in texts)
    else:
        reads = name in ("apt-cache", "dpkg-query") or sub in _PACKAGE_READ
    if reads:
        return _read_only(name, args, ctx)
    return [_review("installs_packages", f"{name} {sub} installs, removes or changes system packages.")]


def _containers(name: str, args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    words = [a.text for a in args[1:] if not a.text.startswith("-")]
    texts = _texts(args[1:])
    if name == "kubectl" and words[:1] == ["delete"]:
        return [_danger("deletes_cluster_resources", "kubectl delete removes resources from the cluster.")]
    if name == "terraform" and (words[:1] == ["destroy"] or "-destroy" in texts):
        return [_danger("destroys_infrastructure", "terraform destroy tears down the managed infrastructure.")]
    if words[:2] in (["volume", "rm"], ["volume", "prune"]) or (
        words[:2] == ["system", "prune"] and "--volumes" in texts
    ):
        return [_danger("destroys_data", f"{name} {' '.join(words[:2])} deletes volumes and the data in them.")]
    return [_review("container_command", f"{name} controls containers, clusters or infrastructure.")]


# --- Dispatch -----------------------------------------------------------------------------------------------------

_RULES: dict[str, Rule] = {
    "rm": _rm,
    "unlink": lambda n, a, c: _rm(n, [a[0], Arg("--"), *a[1:]], c),
    "find": _find,
    "fd": _fd,
    "fdfind": _fd,
    "xargs": _xargs,
    "chmod": _chmod,
    "chown": _chmod,
    "chgrp": _chmod,
    "mv": _mv,
    "cp": _mv,
    "install": _mv,
    "tee": _tee,
    "truncate": _truncate,
    "dd": _dd,
    "init": _init,
    "telinit": _init,
    "systemctl": _systemctl,
    "kill": _kill,
    "killall": _killall,
    "killall5": _killall,
    "pkill": _killall,
    "crontab": _crontab,
    "date": _date,
    "hostname": _hostname,
    "sysctl": _sysctl,
    "sed": _sed,
    "gsed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "sort": _sort,
    "uniq": _uniq,
    "xxd": _uniq,
    "hyperfine": _hyperfine,
    "tar": _tar,
    "unzip": _unzip,
    **dict.fromkeys(("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4"), _compress),
    "curl": _network,
    "wget": _network,
    "eval": _eval,
    "source": _source,
    ".": _source,
    "trap": _trap,
    "alias": _alias,
    "watch": _watch,
    "ssh": _ssh,
    "su": _su,
    "command": _command_lookup,
    **dict.fromkeys(("export", "declare", "typeset", "local", "readonly"), _declare),
    "git": _git,
    "gh": _gh,
    **dict.fromkeys(("npm", "pnpm", "yarn", "bun"), _js),
    "cargo": _cargo,
    "rg": _rg,
    "go": _go,
    **dict.fromkeys(("pip", "pip3"), _pip),
    **dict.fromkeys(("uv", "uvx"), _uv),
    **dict.fromkeys(("make", "gmake"), _make),
    "ruff": _formatter({"--fix"}, {"--check", "--diff"}, fixes_by_default=False),
    "black": _formatter(set(), {"--check", "--diff"}, fixes_by_default=True),
    "isort": _formatter(set(), {"--check", "--check-only", "--diff", "-c"}, fixes_by_default=True),
    "prettier": _formatter({"--write", "-w"}, set(), fixes_by_default=False),
    "eslint": _formatter({"--fix"}, set(), fixes_by_default=False),
    "gofmt": _formatter({"-w"}, set(), fixes_by_default=False),
    "rustfmt": _formatter(set(), {"--check"}, fixes_by_default=True),
    "clang-format": _formatter({"-i"}, set(), fixes_by_default=False),
    **dict.fromkeys(
        """apt apt-get aptitude apt-cache dnf yum pacman brew snap flatpak zypper apk port nix-env gem pipx conda
        mamba micromamba composer choco winget scoop dpkg rpm dpkg-query""".split(),
        _packages,
    ),
    **dict.fromkeys(
        "docker podman kubectl helm docker-compose nerdctl minikube kind terraform pulumi ansible vagrant".split(),
        _containers,
    ),
    **dict.fromkeys(_SHELLS, _shell),
    **dict.fromkeys(_FORMATS, _format),
    **dict.fromkeys(_SHREDS, _shred),
    **dict.fromkeys(_SHUTDOWN, _shutdown),
}
_SIMPLE: dict[str, Finding] = {
    **{n: _safe("read_only", f"{n} only reads and prints.") for n in _READ_ONLY},
    **{n: _safe("shell_builtin", f"{n} only changes the shell's own state.") for n in _SHELL_BUILTINS},
    **{n: _safe("dev_command", f"{n} is a routine development command.") for n in _DEV_TOOLS},
    **{n: _review("modifies_files", f"{n} creates or changes files.") for n in _MODIFIES},
    **{n: _review("network_access", f"{n} talks to the network.") for n in _NETWORK},
    **{n: _review("remote_access", f"{n} reaches another machine.") for n in _REMOTE},
    **{n: _review("changes_system", f"{n} changes the system's configuration.") for n in _SYSTEM},
    "sudoedit": _review("privilege_escalation", "sudoedit edits files with elevated privileges."),
    "npx": _review("runs_code", "npx downloads and runs a package."),
    "open": _review("unknown_command", "open launches an application."),
    "xdg-open": _review("unknown_command", "xdg-open launches an application."),
}


COMMAND_VARIABLES = frozenset(
    {"PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
     "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "PROMPT_COMMAND", "BASH_ENV", "ENV",
     "LESSOPEN", "LESSCLOSE", "BROWSER"}
)  # fmt: skip
"""Environment variables whose value a program runs as a shell command (`GIT_PAGER='…' git log`)."""


def has_rule(name: str) -> bool:
    """Whether `name` has a rule (a function defined with this name is still judged as the command)."""
    return name in _RULES or name in _SIMPLE or name.startswith("mkfs") or _interpreter(name) is not None


def judge(args: Sequence[Arg], ctx: Context) -> list[Outcome]:
    """The outcomes for one simple command, wrappers already stripped."""
    if args[0].dynamic:
        return _dynamic(args)
    name = command_name(args[0].text)
    rule = _RULES.get(name)
    if rule is not None:
        return rule(name, args, ctx)
    if name in _SIMPLE:
        return [_SIMPLE[name]]
    if name.startswith("mkfs"):
        return _format(name, args, ctx)
    if _interpreter(name) is not None:
        return _interpreted(name, args, ctx)
    return _unknown(name, args)


def literal_output(args: Sequence[Arg], stdin_text: str | None = None) -> str | None:
    """What a command prints when that is known statically, so a pipe into a shell can be judged; else None.

    Known: `echo`/`printf` of literal words (escapes decoded), and `cat`, `base64 -d` and `rev` of known input.
    """
    if not args or any(a.dynamic for a in args):
        return None
    name, words = command_name(args[0].text), _texts(args[1:])
    if name == "echo":
        escapes = bool(words) and words[0] in ("-e", "-ne", "-en")
        while words and words[0] in ("-n", "-e", "-E", "-ne", "-en"):
            words = words[1:]
        return _unescape(" ".join(words)) if escapes else " ".join(words)
    if name == "printf" and len(words) == 1 and "%" not in words[0]:
        return _unescape(words[0])
    if stdin_text is None:
        return None
    if name == "cat" and words in ([], ["-"]):
        return stdin_text
    if name == "rev" and not words:
        return "\n".join(line[::-1] for line in stdin_text.split("\n"))
    if name in ("base64", "base32") and set(words) & {"-d", "--decode", "-D"}:
        try:
            raw = (base64.b64decode if name == "base64" else base64.b32decode)("".join(stdin_text.split()))
            return raw.decode()
        except (ValueError, UnicodeDecodeError):
            return None
    return None


def _unescape(text: str) -> str:
    try:
        return codecs.decode(text, "unicode_escape")
    except UnicodeDecodeError:
        return text
