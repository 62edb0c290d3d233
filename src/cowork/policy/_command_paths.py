"""Path checks of the shell classifier: where a command's file arguments and redirections point.

`CommandPaths` says where a command runs: the workspace, the extra folders the user configured (reads and writes
there are fine) and the `Places`. `PathJudge` holds one classification's state (where `cd` went) and judges:

- `sensitive_path` (dangerous): a credential location (`Places.sensitive`, also another user's home), also through
  a glob or an expansion whose fixed part is or may be one (`~/.ss*/id_rsa`, `/proc/$PPID/environ`), one side of
  a `a:b` word (`-v ~/.aws:/x`), and a folder holding one given to a recursive reader (`tar czf - ~`, `grep -r`).
- `protected_path` (dangerous): a write (redirection, or the target of `cp`, `mv`, `tee`, `touch`, `ln`,
  `install`, `chmod`, `sed -i`, `dd of=`, `sort -o`, `curl -o` …) to a protected workspace file (`Places.protected`).
- `outside_workspace` (review): any other path outside the workspace and the configured roots, read or written,
  `/tmp` included (without a sandbox it is shared); `cd` out of the workspace or to a folder only known at run
  time (relative paths are then resolved from there). Reads stay `safe` only for `/dev/null`, `/dev/zero`,
  `/dev/random`, `/dev/urandom`, `/dev/std*`, `/dev/tty`, `/dev/fd/*`, `/usr/share/dict`, `/etc/os-release`,
  `/proc/cpuinfo`, `/proc/meminfo`.

Which words are paths: every word after the command name, unless the command takes no files (`echo`, `export`,
`kill`, `test` …) or the word is a pattern or program (the first operand of `grep`, `rg`, `sed`, `awk`, `jq`, the
value of their `-e`); `--opt=VALUE`, `NAME=VALUE`, `@FILE` count by their value and `-X/abs` by its path; other
options are skipped. `~`, `~user`, `$HOME`, `${HOME}`, `$PWD` are substituted; other expansions count as a glob
`*`, and a word starting with one is not judged. Paths are resolved lexically (`..` folded); with `follow_links`,
`os.path.realpath` is applied too, so a symbolic link already on disk cannot hide a sensitive or protected place
or a folder outside. Nothing here raises. With an unknown workspace (`classify` without `paths`), relative paths
are taken as inside it and nothing is judged outside it.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ._command_rules import Arg, Finding, command_name, operands_and_values
from ._places import SENSITIVE_SYSTEM, Places

__all__ = ["CommandPaths", "PathJudge"]


@dataclass(frozen=True)
class CommandPaths:
    """Where a command runs: its workspace, the configured extra roots, and the sensitive and protected places.

    `workspace` and `roots` are absolute and resolved; `workspace=None` means the folder is not known (relative
    paths are then taken as inside it, and nothing is judged outside it). `follow_links`: also resolve existing
    symbolic links (`os.path.realpath`) when judging a path.
    """

    workspace: Path | None
    places: Places
    roots: tuple[Path, ...] = ()
    follow_links: bool = True

    @classmethod
    def build(
        cls, workspace: Path | None, *, cowork_home: Path | None, roots: Iterable[str | Path] = ()
    ) -> CommandPaths:
        """The paths for the current user: `roots` (configured, `~` allowed, relative to the workspace) resolved."""
        base = _resolved(workspace, Path.cwd) if workspace is not None else None
        resolved = tuple(_resolved(Path(os.path.expanduser(str(r))), lambda: base or Path.cwd()) for r in roots)
        try:
            places = Places.current(cowork_home)
        except (OSError, RuntimeError):  # no home directory can be found
            places = Places(Path("/nonexistent"), cowork_home)
        return cls(base, places, resolved)


def _resolved(path: Path, base: Callable[[], Path]) -> Path:
    """`path` made absolute (relative to `base()`) and resolved; never raises."""
    try:
        if not path.is_absolute():
            path = base() / path
        return path.resolve(strict=False)
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(path))


_OTHER_HOME = re.compile(r"(/home/[^/]+|/Users/[^/]+|/root|/var/root)(?:/|$)")
"""Another user's home, named absolutely (`/root/.ssh`, `/home/bob/.aws`): its credential places count too."""
_TASK = re.compile(r"^/proc/[^/]+/task/(?=[^/]+/)")
_UNKNOWN_WORKSPACE = "/\0workspace"
"""Stands for a workspace that is not known: no real path starts with it, and realpath refuses it."""

_HARMLESS = frozenset(
    {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr",
     "/dev/tty"}
)  # fmt: skip
_HARMLESS_UNDER = ("/dev/fd", "/dev/pts")
_HARMLESS_READS = ("/usr/share/dict", "/etc/os-release", "/proc/cpuinfo", "/proc/meminfo")

_NO_FILES = frozenset(
    """echo printf export declare typeset local readonly alias unalias unset set shift return exit true false :
    sleep kill pkill killall killall5 expr seq yes basename dirname test [ which whereis type command hash printenv
    date cal factor numfmt bc read getopts let eval trap watch wait jobs umask ulimit shopt history help""".split()
)
"""Commands whose arguments are not files (text, names, numbers, shell code judged on its own)."""
_PATTERN_FIRST: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("grep", "egrep", "fgrep", "zgrep"), ("efABCmdD", "")),
    **dict.fromkeys(("rg", "ag", "ack"), ("efABCmgtTjMGr", "type glob type-not max-count replace context")),
    **dict.fromkeys(("sed", "gsed"), ("efl", "expression file")),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), ("fFv", "file")),
    "jq": ("f", "from-file"),
}
"""Commands whose first operand is a pattern or a program: their options that take a value (the first letters
and long names supplying the pattern or program themselves, after which the first operand is a file)."""
_PATTERN_VALUES = frozenset({"-e", "--regexp", "--expression"})
_RECURSIVE_ALWAYS = frozenset({"tar", "bsdtar", "rg", "ag", "ack", "7z", "rclone"})
_RECURSIVE_WITH_FLAG = frozenset({"cp", "grep", "egrep", "fgrep", "zgrep", "zip", "scp", "rsync"})
_CD = frozenset({"cd", "pushd", "popd"})


def _within(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root + "/")


def _normal(path: str) -> str:
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


def _is_glob(text: str) -> bool:
    return "*" in text or "?" in text or "[" in text


def _fixed_prefix(path: str) -> str:
    """The folders of `path` before its first glob component (`/a/b*/c` → `/a`)."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        if _is_glob(part):
            return "/".join(parts[:i]) or "/"
    return path


def _placeholders(word: str) -> str:
    """A dynamic word with `$HOME`/`$PWD` spelled `~`/`.` and every other expansion replaced by `*`."""
    for name, spelled in (("${HOME}", "~"), ("$HOME", "~"), ("${PWD}", "."), ("$PWD", ".")):
        if word == name or word.startswith(name + "/"):
            word = spelled + word[len(name) :]
            break
    out: list[str] = []
    i = 0
    while i < len(word):
        c, nxt = word[i], word[i + 1 : i + 2]
        if (c == "$" and nxt in ("(", "{")) or (c in "<>" and nxt == "("):
            i = _closing(word, i + 1)
            out.append("*")
        elif c == "$" and (nxt.isalpha() or nxt == "_"):
            i += 1
            while i < len(word) and (word[i].isalnum() or word[i] == "_"):
                i += 1
            out.append("*")
        elif c == "$" and nxt and (nxt.isdigit() or nxt in "@*#?-$!"):
            i += 2
            out.append("*")
        elif c == "`":
            end = word.find("`", i + 1)
            i = len(word) if end < 0 else end + 1
            out.append("*")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _closing(word: str, i: int) -> int:
    """The index after the bracket closing the one at `i`."""
    opening, closing, depth = word[i], {"(": ")", "{": "}"}[word[i]], 0
    while i < len(word):
        if word[i] == opening:
            depth += 1
        elif word[i] == closing:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(word)


@dataclass(frozen=True)
class _Place:
    path: str
    """Absolute and normalized; may hold glob characters."""
    places: Places
    """The places to judge it by (another user's home for `~user`)."""


class PathJudge:
    """Judges the paths of one classification; remembers where `cd` went."""

    def __init__(self, paths: CommandPaths) -> None:
        self.paths = paths
        self.outside = paths.workspace is not None
        self.workspace = str(paths.workspace) if paths.workspace is not None else _UNKNOWN_WORKSPACE
        self.roots = [str(r) for r in paths.roots]
        self.cwd: str | None = self.workspace
        """The folder relative paths start from; None once a `cd` went somewhere only known at run time."""
        self.stack: list[str | None] = []

    # -- commands --------------------------------------------------------------------------------------------------

    def command(self, args: Sequence[Arg]) -> list[Finding]:
        """Findings for the paths one simple command (wrappers stripped) names, and for `cd`."""
        name = command_name(args[0].text)
        if name in _CD:
            return self.change_directory(name, args)
        if name in _NO_FILES or len(args) < 2:
            return []
        written = _written(name, args)
        skipped = _patterns(name, args)
        recursive = _recursive(name, args)
        findings: list[Finding] = []
        for i, arg in enumerate(args[1:], start=1):
            if i in skipped:
                continue
            text = _path_part(arg.text)
            if text is None:
                continue
            finding = self.judge(text, dynamic=arg.dynamic, write=i in written, recursive=recursive, what=name)
            if ":" in text and (finding is None or finding.verdict != "dangerous"):
                # a mount (`-v ~/.aws:/root/.aws`), a search path, a remote path (`host:~/.ssh`)
                places = (self.place(p, dynamic=arg.dynamic) for p in text.split(":") if p.startswith(("/", "~", "$")))
                found = (self.sensitive(p, recursive=False, what=name, text=text) for p in places if p is not None)
                finding = next((f for f in found if f is not None), finding)
            if finding is not None:
                findings.append(finding)
        return findings

    def redirect(self, arg: Arg, *, write: bool) -> Finding | None:
        """The finding for a redirection reading (`<`) or writing (`>`, `>>` …) `arg`."""
        return self.judge(arg.text, dynamic=arg.dynamic, write=write, recursive=False, what="The redirection")

    def change_directory(self, name: str, args: Sequence[Arg]) -> list[Finding]:
        operands = [a for a in args[1:] if not a.text.startswith("-") or a.text == "-"]
        if name == "popd":
            self.cwd = self.stack.pop() if self.stack else None
            return self._unknown_folder(name) if self.cwd is None else []
        if name == "pushd":
            self.stack.append(self.cwd)
        target = operands[0] if operands else Arg("~")
        place = None if target.text == "-" else self.place(target.text, dynamic=target.dynamic)
        if place is None or _is_glob(place.path):
            self.cwd = None
            return self._unknown_folder(name)
        self.cwd = place.path
        finding = self.sensitive(place, recursive=False, what=name, text=target.text)
        if finding is not None:
            return [finding]
        if self.outside and not self.inside(place.path):
            detail = f"{name} leaves the workspace for {place.path}; later relative paths point outside it."
            return [Finding("review", "outside_workspace", detail)]
        return []

    def _unknown_folder(self, name: str) -> list[Finding]:
        if not self.outside:
            return []
        detail = f"{name} moves to a folder only known at run time, so later relative paths cannot be checked."
        return [Finding("review", "outside_workspace", detail)]

    # -- one path --------------------------------------------------------------------------------------------------

    def place(self, text: str, *, dynamic: bool) -> _Place | None:
        """Where `text` points, absolute and normalized; None when that cannot be known."""
        if dynamic:
            text = _placeholders(text)
        places = self.paths.places
        if text.startswith("~"):
            user, slash, rest = text[1:].partition("/")
            home = str(places.user_home)
            if user == "+":
                if self.cwd is None:
                    return None
                home = self.cwd
            elif user == "-" or _is_glob(user):
                return None
            elif user and user != places.user_home.name:
                home = "/root" if user == "root" else posixpath.join(posixpath.dirname(home), user)
                places = Places(Path(home), places.cowork_home)
            text = home + slash + rest
        elif not text.startswith("/"):
            if text.startswith("*") or self.cwd is None:
                return None
            path = _normal(posixpath.join(self.cwd, text))
            if _within(self.cwd, _UNKNOWN_WORKSPACE) and not _within(path, _UNKNOWN_WORKSPACE):
                return None  # `..` out of a folder that is not known
            return _Place(path, places)
        return _Place(_normal(text), places)

    def judge(self, text: str, *, dynamic: bool, write: bool, recursive: bool, what: str) -> Finding | None:
        """The finding for one path a command reads or writes, or None when it is fine."""
        place = self.place(text, dynamic=dynamic)
        if place is None or (place.path in _HARMLESS or any(_within(place.path, d) for d in _HARMLESS_UNDER)):
            return None
        finding = self.sensitive(place, recursive=recursive, what=what, text=text)
        if finding is not None:
            return finding
        shown = text if text == place.path else f"{text} ({place.path})"
        if write:
            reason = self.protected(place.path)
            if reason is not None:
                return Finding("dangerous", "protected_path", f"{what} writes {shown}: {reason}.")
        if not self.outside or self.inside(place.path):
            return None
        if not write and any(_within(place.path, r) for r in _HARMLESS_READS):
            return None
        verb = "writes" if write else "reads"
        detail = f"{what} {verb} {shown}, outside the workspace {self.workspace}."
        return Finding("review", "outside_workspace", detail)

    def sensitive(self, place: _Place, *, recursive: bool, what: str, text: str = "") -> Finding | None:
        reason = _sensitive(place.path, place.places)
        home = _OTHER_HOME.match(place.path)
        if reason is None and home is not None and home[1] != str(place.places.user_home):
            reason = _sensitive(place.path, Places(Path(home[1]), place.places.cowork_home))
        if reason is None:
            real = self.real(place.path)
            reason = _sensitive(real, place.places) if real is not None else None
        if reason is None and recursive:
            inner = next((r for r in _roots(place.places) if _within(r, place.path) and r != place.path), None)
            if inner is not None:
                reason = f"{what} reads everything under {place.path}, including {inner}, which holds secrets"
        if reason is None:
            return None
        written = f" ({text} as written)" if text and text != place.path else ""
        return Finding("dangerous", "sensitive_path", f"{what} touches a place with secrets{written}: {reason}.")

    def protected(self, path: str) -> str | None:
        for candidate in (path, self.real(path)):
            reason = Places.protected(Path(_fixed_prefix(candidate)), Path(self.workspace)) if candidate else None
            if reason is not None:
                return reason
        return None

    def inside(self, path: str) -> bool:
        fixed = _fixed_prefix(path)
        allowed = [self.workspace, *self.roots]
        if not any(_within(fixed, root) for root in allowed):
            return False
        real = self.real(fixed)
        return real is None or any(_within(real, root) for root in allowed)

    def real(self, path: str) -> str | None:
        """`path` with existing symbolic links resolved, when that differs and links are followed."""
        if not self.paths.follow_links or _is_glob(path) or "\0" in path:
            return None
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError, RuntimeError):
            return None
        return real if real != path else None


def _roots(places: Places) -> list[str]:
    try:
        return [str(r) for r in places.sensitive_roots()]
    except (OSError, ValueError):
        return []


def _sensitive(path: str, places: Places) -> str | None:
    """Why `path` (absolute, maybe a glob) is or may name a credential location."""
    path = _TASK.sub("/proc/", path)  # a thread's folder mirrors its process's (`/proc/1/task/1/environ`)
    fixed = _fixed_prefix(path)
    try:
        reason = places.sensitive(Path(path)) or places.sensitive(Path(fixed))
    except (OSError, ValueError):
        reason = None
    if reason is not None or fixed == path:
        return reason
    parts = path.strip("/").split("/")
    for root in [*_roots(places), *(p for p in SENSITIVE_SYSTEM if "*" in p)]:
        names = root.strip("/").split("/")
        if len(parts) >= len(names) and all(_name_matches(p, n) for p, n in zip(parts, names, strict=False)):
            return f"{path} can match {root}, which holds secrets"
    return None


def _name_matches(pattern: str, name: str) -> bool:
    if name == "*":
        return True
    if name.startswith(".") and not pattern.startswith("."):
        return False  # the shell's `*` does not match a leading dot
    return fnmatch.fnmatchcase(name.casefold(), pattern.casefold())


def _path_part(text: str) -> str | None:
    """The part of a word that may be a path: the value of `--opt=VALUE`/`NAME=VALUE`, `/abs` of `-X/abs`, and
    `FILE` of `@FILE` (curl's upload of a file)."""
    if text.startswith("-"):
        if text.startswith("--") and "=" in text:
            return text.partition("=")[2] or None
        if len(text) > 2 and text[1] != "-" and text[2] == "/":
            return text[2:]
        return None
    name, eq, value = text.partition("=")
    if eq and name and name.replace("_", "a").replace("-", "a").isalnum():
        text = value
    return text.removeprefix("@") or None


def _patterns(name: str, args: Sequence[Arg]) -> set[int]:
    """Indexes of words that are patterns or programs, not files."""
    spec = _PATTERN_FIRST.get(name)
    if spec is None:
        return set()
    short, long = spec[0], frozenset(spec[1].split())
    skipped = {i + 1 for i, a in enumerate(args[:-1]) if a.text in _PATTERN_VALUES}
    supplying = {"f"} if name in ("awk", "gawk", "mawk", "nawk", "jq") else {"e", "f"}
    given = any(
        (a.text.startswith("--") and a.text[2:].partition("=")[0] in ("regexp", "file", "expression", "from-file"))
        or (a.text[:1] == "-" and a.text[1:2] != "-" and any(c in supplying for c in a.text[1:]))
        for a in args[1:]
    )
    if not given:
        operands, _ = operands_and_values(args, value=short, long_value=long)
        if operands:
            skipped |= {i for i, a in enumerate(args) if a is operands[0]}
    return skipped


def _recursive(name: str, args: Sequence[Arg]) -> bool:
    if name in _RECURSIVE_ALWAYS:
        return True
    if name not in _RECURSIVE_WITH_FLAG:
        return False
    letters = "rRa" if name in ("cp", "rsync") else "rR"
    for a in args[1:]:
        t = a.text
        if t in ("--recursive", "--archive", "--dereference-recursive"):
            return True
        if t[:1] == "-" and t[1:2] != "-" and set(t[1:]) & set(letters):
            return True
    return False


def _written(name: str, args: Sequence[Arg]) -> set[int]:
    """Indexes of the words a command writes to (a destination, an edited file, an output option's value)."""
    index = {id(a): i for i, a in enumerate(args)}
    targets: list[Arg] = []
    if name in ("cp", "mv", "install", "ln"):
        operands, values = operands_and_values(
            args, value="tSmog", long_value={"target-directory", "suffix", "mode", "owner", "group"}
        )
        directory = values.get("t") or values.get("target-directory")
        if directory:
            spelled = {directory[-1], "-t" + directory[-1], "--target-directory=" + directory[-1]}
            return {i for i, a in enumerate(args) if i and a.text in spelled}
        if name == "install" and any(a.text == "-d" for a in args):
            targets = list(operands)
        elif len(operands) > 1:
            targets = [operands[-1]]
    elif name in ("tee", "touch", "truncate"):
        targets = list(operands_and_values(args, value="rdts", long_value={"reference", "date", "size"})[0])
    elif name in ("chmod", "chown", "chgrp"):
        targets = [a for a in args[1:] if not a.text.startswith("-")][1:]
    elif name in ("sed", "gsed") and any(a.text.startswith(("-i", "--in-place")) for a in args[1:]):
        operands, values = operands_and_values(args, value="efl", long_value={"expression", "file"})
        scripted = values.get("e") or values.get("f") or values.get("expression") or values.get("file")
        targets = list(operands if scripted else operands[1:])
    elif name in ("rsync", "scp"):
        operands, _ = operands_and_values(args, value="eFiJloPS" if name == "scp" else "eBfT")
        targets = [operands[-1]] if len(operands) > 1 else []
    elif name == "dd":
        return {i for i, a in enumerate(args) if a.text.startswith("of=")}
    outputs = {"sort": ("-o", "--output"), "curl": ("-o", "--output"), "wget": ("-O", "--output-document")}.get(name)
    if outputs:
        found = {i + 1 for i, a in enumerate(args[:-1]) if a.text in outputs}
        found |= {i for i, a in enumerate(args) if a.text.startswith(tuple(o + "=" for o in outputs if o[1] == "-"))}
        return found
    return {index[id(a)] for a in targets if id(a) in index}
