"""Shell command risk classification: parse a command with a real shell parser and judge every command in it.

Verdicts. `safe`: read-only or routine development work (`ls`, `git status`, `rg TODO`, `pytest`) runs without
asking. `review`: the command changes state in a routine, recoverable way (`mv`, `git commit`, `npm install`, a
`>` into a file), or it cannot be known statically (an unknown program, `$CMD`, shell the parser cannot read):
ask the user. `dangerous`: obvious destruction (`rm -r`, `git push --force`, `git reset --hard`, writing onto a
disk device, `mkfs`, `curl … | sh`, a fork bomb, `shutdown`): ask with a warning. This is a user-experience
gate; the sandbox is the security boundary.

What is examined. The command is parsed with bashlex, never matched with regexes. Every simple command found
anywhere is judged and the worst verdict wins; `fragment` is the first part (in the order examined) with that
verdict. That covers pipelines, lists (`;`, `&&`, `||`, `&`), subshells, groups, `if`/`for`/`while`, function
bodies, command substitution (`$(…)`, backticks, also inside `${x:-…}` and here-documents), process substitution,
redirections (onto devices, system files, shell profiles), shell text run by other commands (`bash -c`, `sh -c`,
`eval`, `su -c`, `ssh host CMD`, `watch`, `trap`, `env -S`, `python -c "os.system(…)"`, a here-document or
`echo` piped into a shell), and commands run by `xargs`, `find -exec/-execdir/-ok`, `fd -x`. Quoting tricks
(`'r'm`, `r\\m`, `\\rm`) are undone by the parser. A command word that is an expansion is resolved when it can be
(`X=rm; $X`, `$(echo rm)`, `$'\\x72m'`, `{rm,-rf,/}`) and is otherwise at least `review`.

Paths (`_command_paths`). The file arguments of every simple command (after its wrappers) and every redirection
target are resolved against the workspace (`~`, `$HOME`, `..`, the folder a `cd` moved to) and judged:
a credential location (`~/.ssh`, `~/.aws`, Cowork's home, `/etc/shadow`, `/proc/<any>/environ` …, also through
a glob or an expansion, or a recursive reader given a folder holding one) is `dangerous` (`sensitive_path`); a
write to a file programs run outside the sandbox (`.git/hooks`, `.git/config`, `.envrc`, `.vscode`, `.cowork` …)
is `dangerous` (`protected_path`); any other path outside the workspace and the configured roots, and a `cd`
out of it, is `review` (`outside_workspace`), except reads of `/dev/null`, `/dev/std*`, `/dev/tty`,
`/usr/share/dict`, `/etc/os-release`, `/proc/cpuinfo`, `/proc/meminfo`. Git settings that make git run a program
(`git config core.fsmonitor …`, `git -c core.sshCommand=…`, `git config --edit`, `GIT_CONFIG_KEY_<n>` in the
environment) are `dangerous` (`git_executes`). Without `paths` the workspace is unknown: only credential places
(of the current user and COWORK_HOME), protected files named relatively, and git settings are judged.

Wrappers. `sudo`, `doas`, `run0`, `pkexec`, `chroot`, `env`, `command`, `builtin`, `exec`, `nice`, `nohup`,
`time`, `timeout`, `stdbuf`, `ionice`, `chrt`, `taskset`, `setsid`, `unbuffer`, `busybox` and the project runners
`uv run`, `poetry run`, `pipenv run`, `pdm run`, `hatch run`, `rye run`, `bundle exec`, `conda run` are seen
through with their options and leading `NAME=value` words; the wrapped command is judged. Privilege wrappers
make the command at least `review` (`privilege_escalation`).

Configured patterns (`[tools.commands]` `allow` and `deny`). A pattern is a shell-style glob (`fnmatch`: `*`,
`?`, `[…]`; `*` also matches spaces), matched case-sensitively against one simple command's words after quote
removal, joined with single spaces; leading `NAME=value` assignments and redirections are not part of it. It is
tried both on the command as written (`sudo apt update`) and after wrappers are stripped (`apt update`); runs of
whitespace in a pattern count as one space. Examples: `"npm run *"`, `"git push*"`, `"make"` (only a bare
`make`). A `deny` match makes that simple command `dangerous` (`denied_by_config`). An `allow` match makes it
`safe` (`allowed_by_config`) but never overrides a built-in `dangerous` verdict; an allow match after stripping
does not lift the `review` a privilege wrapper adds (allow `"sudo apt *"` for that). Every other simple command
(another part of a pipeline, a `bash -c` payload, an `xargs` command) is matched and judged on its own.

Unparseable input (bashlex does not implement `case`, `[[ … ]]` with some operands, arithmetic `$(( ))` and
`(( ))` loops, `coproc`, unterminated quotes …) is `review` with reason `unparseable`, never `safe`. Two bashlex
gaps are worked around: the `time` keyword is read as the `time` command (escaped as `\\time` before parsing),
here-documents with a quoted delimiter (`<<'EOF'`) are read by a corrected copy of bashlex's reader, and an
unclosed `${` (on which bashlex allocates without end) is refused; both corrections are installed into bashlex
when this module is imported. Commands longer than 50,000 characters are `review` without parsing.

Over 500 lines: the parser adapter (with its two bashlex corrections) and the walk over every node kind belong
together; the per-command rules, which are data, are in `_command_rules`.
"""

from __future__ import annotations

import codecs
import fnmatch
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import bashlex  # type: ignore[import-untyped]
from bashlex import errors as _bashlex_errors
from bashlex import heredoc as _bashlex_heredoc
from bashlex import state as _bashlex_state
from bashlex import subst as _bashlex_subst
from bashlex import tokenizer as _bashlex_tokenizer

from cowork.config import resolve_home

from ._braces import BraceError, expand_braces
from ._command_paths import CommandPaths, PathJudge
from ._command_rules import (
    COMMAND_VARIABLES,
    NETWORK_FETCHERS,
    SEVERITY,
    Arg,
    Context,
    Finding,
    Nested,
    Stdin,
    Verdict,
    command_name,
    git_environment,
    has_rule,
    judge,
    literal_output,
    unwrap,
    write_target,
)

__all__ = ["Classification", "CommandPaths", "Verdict", "classify"]

_MAX_CHARS = 50_000
"""Longer shell text is not parsed (`review`): a command the user must read anyway, and parsing time is bounded."""
_MAX_DEPTH = 8
"""Shell text nested in shell text (`bash -c "eval 'sh -c …'"`) deeper than this is not read: `review`."""
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_SETS_ENVIRONMENT = frozenset({"env", "export", "declare", "typeset", "local", "readonly", "sudo"})


@dataclass(frozen=True)
class Classification:
    """A command's verdict, why (a stable reason code and a sentence), and the part of the command that decided it."""

    verdict: Verdict
    reason: str
    detail: str
    fragment: str


def classify(
    command: str, *, allow: Sequence[str] = (), deny: Sequence[str] = (), paths: CommandPaths | None = None
) -> Classification:
    """Classify a shell command as safe, review or dangerous.

    Args:
        command: The shell text.
        allow: The configured `allow` patterns.
        deny: The configured `deny` patterns.
        paths: Where the command runs (workspace, configured roots, sensitive places). None: the workspace is not
            known; sensitive places are those of the current user and Cowork home (`COWORK_HOME` or `~/.cowork`),
            and nothing is judged outside the workspace.

    Returns:
        The worst verdict over every command in `command`, with its reason and the part that decided it.
    """
    if paths is None:
        paths = CommandPaths.build(None, cowork_home=resolve_home())
    analysis = _Analysis(allow, deny, PathJudge(paths))
    analysis.script(command, _Where(), depth=0)
    if analysis.result is None:
        return Classification("safe", "empty", "The command runs nothing.", "")
    return analysis.result


# --- The bashlex adapter ------------------------------------------------------------------------------------------


class _Unparseable(Exception):
    """Shell text bashlex cannot read."""


def _unquote(word: str) -> str:
    """Quote removal for a here-document delimiter (`'EOF'`, `"EOF"`, `\\EOF` → `EOF`)."""
    out, quote, i = [], "", 0
    while i < len(word):
        c = word[i]
        if c == quote:
            quote = ""
        elif not quote and c in "'\"":
            quote = c
        elif c == "\\" and quote != "'" and i + 1 < len(word):
            i += 1
            out.append(word[i])
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _makeheredoc(tok: Any, redirnode: Any, lineno: int, killleading: bool) -> str:
    """bashlex's here-document reader, corrected: quoted delimiters match, and `<<-` cannot loop forever."""
    delimiter = _unquote(redirnode.output.word)
    document: list[str] = []
    startpos = tok._shell_input_line_index
    line = tok.readline(False)
    while line:
        if killleading:
            line = line.lstrip("\t")
        document.append(line)
        if line in (delimiter + "\n", delimiter):
            break
        line = tok.readline(False)
    if not line:
        raise _bashlex_errors.ParsingError(
            f"here-document delimited by end-of-file (wanted {delimiter!r})",
            tok._shell_input_line,
            tok._shell_input_line_index,
        )
    text = "".join(document)
    endpos = tok._shell_input_line_index - 1
    redirnode.heredoc = bashlex.ast.node(kind="heredoc", value=text, pos=(startpos, endpos))
    if redirnode.pos[1] + 1 == startpos:
        redirnode.pos = (redirnode.pos[0], endpos)
    return text


BASHLEX_VERSION = "0.18"
"""The bashlex release whose internals the two corrections below replace (pinned in pyproject.toml)."""


def _check_bashlex() -> None:
    """Refuse to start on a bashlex whose internals differ from the ones the corrections were written against.

    A silently unapplied correction would let a quoted here-document or an unclosed `${` hang the classifier, so a
    mismatch fails at import with a message that says what to install.

    Raises:
        ImportError: another bashlex version, or the patched functions are missing or have other parameters.
    """
    import inspect
    from importlib.metadata import version

    installed = version("bashlex")
    expected = {
        (_bashlex_heredoc, "makeheredoc"): ["tokenizer", "redirnode", "lineno", "killleading"],
        (_bashlex_subst, "_paramexpand"): ["parserobj", "string", "sindex"],
    }
    for (module, name), params in expected.items():
        fn = getattr(module, name, None)
        found = list(inspect.signature(fn).parameters) if callable(fn) else None
        if installed != BASHLEX_VERSION or found != params:
            raise ImportError(
                f"cowork.policy corrects bashlex {BASHLEX_VERSION} internals, but bashlex {installed} is installed "
                f"({module.__name__}.{name} has parameters {found}, expected {params}). "
                f"Install bashlex=={BASHLEX_VERSION} (uv sync)."
            )


_check_bashlex()
_bashlex_heredoc.makeheredoc = _makeheredoc
_paramexpand = _bashlex_subst._paramexpand


def _checked_paramexpand(parserobj: Any, string: str, sindex: int) -> Any:
    """bashlex's `${…}` expansion, refusing an unclosed brace (on which bashlex loops, allocating without end)."""
    if string[sindex + 1 : sindex + 2] == "{" and string.find("}", sindex + 2) < 0:
        raise _bashlex_errors.ParsingError("bad substitution: no closing '}'", string, sindex)
    return _paramexpand(parserobj, string, sindex)


_bashlex_subst._paramexpand = _checked_paramexpand


def _time_keywords(text: str) -> list[int]:
    """Where bashlex's tokenizer sees the `time` keyword (which its parser does not implement)."""
    tokens = _bashlex_tokenizer.tokenizer(text, parserstate=_bashlex_state.parserstate())
    return [t.lexpos for t in tokens if t.ttype == _bashlex_tokenizer.tokentype.TIME]


def _is_blank(text: str) -> bool:
    try:
        return not list(_bashlex_tokenizer.tokenizer(text, parserstate=_bashlex_state.parserstate()))
    except Exception:
        return False


def _parse(text: str) -> tuple[list[Any], str, Callable[[int], int]]:
    """The bashlex trees for `text`, the text they were parsed from, and a map of their positions back to `text`."""
    try:
        return bashlex.parse(text), text, lambda pos: pos
    except NotImplementedError as exc:
        if "time command" not in str(exc):
            raise _Unparseable(str(exc) or "not implemented by the parser") from None
    except Exception as exc:
        raise _Unparseable(str(exc) or type(exc).__name__) from None
    try:
        keywords = _time_keywords(text)
        fixed = text
        for pos in reversed(keywords):
            fixed = fixed[:pos] + "\\" + fixed[pos:]
        inserted = [pos + k for k, pos in enumerate(keywords)]
        return bashlex.parse(fixed), fixed, lambda pos: pos - sum(1 for i in inserted if i < pos)
    except Exception as exc:
        raise _Unparseable(str(exc) or type(exc).__name__) from None


def _children(node: Any) -> Iterator[Any]:
    for attr in ("parts", "list", "redirects"):
        yield from getattr(node, attr, None) or ()
    for attr in ("command", "output"):
        child = getattr(node, attr, None)
        if hasattr(child, "kind"):
            yield child


def _simple_commands(node: Any) -> Iterator[Any]:
    """Every command node in `node`, substitutions included."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.kind == "command":
            yield current
        stack.extend(_children(current))


def _fetches(node: Any) -> bool:
    """Whether a command anywhere in `node` downloads from the network (`curl`, `wget` … also through `sudo`)."""
    for command in _simple_commands(node):
        words = [Arg(p.word) for p in command.parts if p.kind == "word"]
        core = unwrap(words).core if words else ()
        if core and command_name(core[0].text) in NETWORK_FETCHERS:
            return True
    return False


def _parts(node: Any) -> list[Any]:
    return list(getattr(node, "parts", None) or ())


def _substitutions(word: Any) -> list[Any]:
    return [p for p in _parts(word) if p.kind in ("commandsubstitution", "processsubstitution")]


_MAX_BRACE_WORDS = 64
"""More alternatives than this and a word is judged dynamic (unknown) rather than expanded."""


def _brace_expand(word: str) -> list[str] | None:
    """Bash brace expansion of comma lists (`{rm,-rf,/}` → rm -rf /); None when there is nothing it can expand."""
    try:
        out = expand_braces(word, limit=_MAX_BRACE_WORDS)
    except BraceError:
        return None
    if out == [word]:
        return None
    return [w for w in out if w]


def _has_braces(word: str) -> bool:
    """Whether a word has a brace expansion (`{a,b}`, `{1..3}`)."""
    start = word.find("{")
    end = word.find("}", start + 1)
    return start >= 0 and end > start and ("," in word[start:end] or ".." in word[start:end])


def _is_glob(word: str) -> bool:
    """Whether an unquoted word is a pathname pattern (`/bin/r?`, `*`, `[a-z]*`; not the command `[`)."""
    return "*" in word or "?" in word or ("[" in word and "]" in word[word.index("[") + 1 :])


def _here_document_word(body: str) -> str:
    """A here-document body as a double-quoted word, so bashlex finds the substitutions in it."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] in "$`\\\n":
            out.append(body[i : i + 2])
            i += 2
            continue
        out.append({"\\": "\\\\", '"': '\\"'}.get(c, c))
        i += 1
    return ': "' + "".join(out) + '"'


# --- The analysis -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Where:
    """How a command is run: its input, whether xargs/find append its arguments, the function it is defined in."""

    stdin: Stdin = "terminal"
    stdin_text: str | None = None
    bulk: bool = False
    function: str | None = None
    concurrent: bool = False
    """In a pipeline or run in the background (a function calling itself like this is a fork bomb)."""


class _Analysis:
    """The worst finding over every simple command, and the configured patterns."""

    def __init__(self, allow: Sequence[str], deny: Sequence[str], paths: PathJudge) -> None:
        self.allow = tuple(" ".join(p.split()) for p in allow if p.strip())
        self.deny = tuple(" ".join(p.split()) for p in deny if p.strip())
        self.paths = paths
        self.result: Classification | None = None

    def record(self, verdict: Verdict, reason: str, detail: str, fragment: str) -> None:
        if self.result is None or SEVERITY[verdict] > SEVERITY[self.result.verdict]:
            self.result = Classification(verdict, reason, detail, fragment.strip())

    def finding(self, finding: Finding, fragment: str) -> None:
        self.record(finding.verdict, finding.reason, finding.detail, fragment)

    def script(self, text: str, where: _Where, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.record("review", "nesting_too_deep", "The command nests shell text too deeply to check.", text)
            return
        if not text.strip():
            return
        if len(text) > _MAX_CHARS:
            self.record("review", "unparseable", "The command is too long to check.", text[:200])
            return
        try:
            trees, parsed, back = _parse(text)
        except _Unparseable as exc:
            if not _is_blank(text):
                detail = f"The shell parser cannot read this command ({exc}), so it was not checked."
                self.record("review", "unparseable", detail, text)
            return
        walker = _Walker(self, text, parsed, back, depth)
        try:
            for tree in trees:
                walker.walk(tree, where)
        except Exception as exc:  # an unexpected tree shape: ask rather than fail
            detail = f"The classifier could not follow this command's structure ({type(exc).__name__})."
            self.record("review", "unparseable", detail, text)

    def matching(self, patterns: tuple[str, ...], *texts: str) -> str | None:
        return next((p for p in patterns for t in texts if t and fnmatch.fnmatchcase(t, p)), None)


class _Walker:
    """Walks the bashlex trees of one piece of shell text."""

    def __init__(self, analysis: _Analysis, text: str, parsed: str, back: Callable[[int], int], depth: int) -> None:
        self.analysis, self.text, self.parsed, self.back, self.depth = analysis, text, parsed, back, depth
        self.variables: dict[str, str] = {}
        """Variables assigned a literal value exactly once so far; others are not resolved."""
        self.unknown: set[str] = set()
        self.functions: dict[str, str] = {}
        """Functions defined so far, with their source."""

    def span(self, node: Any) -> tuple[int, int]:
        return self.back(node.pos[0]), self.back(node.pos[1])

    def source(self, node: Any) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def walk(self, node: Any, where: _Where) -> None:
        handler = getattr(self, f"_walk_{node.kind}", None)
        if handler is not None:
            handler(node, where)
        elif node.kind not in ("reservedword", "operator", "pipe", "tilde", "parameter", "heredoc"):
            detail = f"The shell construct {node.kind!r} is not understood by the classifier."
            self.analysis.record("review", "unparseable", detail, self.source(node))

    def _walk_list(self, node: Any, where: _Where) -> None:
        parts = node.parts
        for i, part in enumerate(parts):
            background = i + 1 < len(parts) and parts[i + 1].kind == "operator" and parts[i + 1].op == "&"
            self.walk(part, replace(where, concurrent=where.concurrent or background))

    def _walk_pipeline(self, node: Any, where: _Where) -> None:
        commands = [p for p in node.parts if p.kind not in ("pipe", "reservedword")]
        output: str | None = None  # what the previous command prints, when that is known statically
        for i, command in enumerate(commands):
            inner = replace(where, concurrent=where.concurrent or len(commands) > 1)
            if i > 0:
                stdin: Stdin = "network" if any(_fetches(c) for c in commands[:i]) else "pipe"
                inner = replace(inner, stdin=stdin, stdin_text=output)
            self.walk(command, inner)
            output = self.echoed(command, output if i > 0 else None)

    def _walk_compound(self, node: Any, where: _Where) -> None:
        for part in node.list:
            self.walk(part, where)
        for redirect in getattr(node, "redirects", None) or ():
            self.redirect(redirect, where)

    def _walk_if(self, node: Any, where: _Where) -> None:
        for part in node.parts:
            self.walk(part, where)

    _walk_for = _walk_while = _walk_until = _walk_if

    def _walk_function(self, node: Any, where: _Where) -> None:
        name = next(p.word for p in node.parts if p.kind == "word")
        self.functions[name] = self.source(node)
        for part in node.parts:
            if part.kind != "word":
                self.walk(part, replace(where, function=name, concurrent=False))

    def _walk_word(self, node: Any, where: _Where) -> None:
        self.word(node)
        self.forget(node.word)  # a `for NAME in …` loop variable

    def _walk_redirect(self, node: Any, where: _Where) -> None:
        self.redirect(node, where)

    def _walk_command(self, node: Any, where: _Where) -> None:
        words = [p for p in node.parts if p.kind == "word"]
        assignments = [p for p in node.parts if p.kind == "assignment"]
        redirects = [p for p in node.parts if p.kind == "redirect"]
        for part in (*assignments, *words):
            self.word(part)
        for assignment in assignments:
            name, _, value = assignment.word.partition("=")
            if name in COMMAND_VARIABLES and value.strip():
                self.analysis.script(value, _Where(), self.depth + 1)  # GIT_PAGER='…' git log
        exported = words and command_name(words[0].word) in _SETS_ENVIRONMENT
        git_settings = git_environment([p.word for p in (*assignments, *(words if exported else ()))])
        if git_settings is not None:
            self.analysis.finding(git_settings, self.source(node))
        for word in words[1:]:
            self.forget(word.word)  # export NAME=…, read NAME, unset NAME …
        for redirect in redirects:
            self.redirect(redirect, where)
        if not words:
            for assignment in assignments:
                self.assign(assignment)
            if assignments and not redirects:
                self.analysis.record("safe", "assignment", "The command only sets shell variables.", self.source(node))
            return
        for assignment in assignments:
            self.forget(assignment.word)  # `X=1 cmd`: whether X stays set depends on cmd
        args = [arg for i, word in enumerate(words) for arg in self.resolved(word, command=i == 0)]
        self.simple(args, self.input_of(redirects, where), self.source(node))

    # -- words -----------------------------------------------------------------------------------------------------

    def word(self, node: Any) -> None:
        """Walk the substitutions inside a word (`$(…)`, backticks, `<(…)`, and those inside `${x:-…}`)."""
        for part in _parts(node):
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self.walk(part.command, _Where())
            elif part.kind == "parameter":
                # bashlex leaves `${x:-$(cmd)}` unparsed: read the text from the first substitution on.
                value = getattr(part, "value", "")
                starts = [i for i in (value.find(s) for s in ("$(", "`", "<(", ">(")) if i >= 0]
                if starts:
                    self.analysis.script(": " + value[min(starts) :], _Where(), self.depth + 1)

    def arg(self, node: Any) -> Arg:
        parts = _parts(node)
        dynamic = any(p.kind != "tilde" for p in parts)
        fetches = any(_fetches(s.command) for s in _substitutions(node))
        start, end = self.span(node)
        return Arg(node.word, start, end, dynamic=dynamic, fetches=fetches)

    def resolved(self, node: Any, *, command: bool) -> list[Arg]:
        """A word's arguments, with expansions known statically resolved; otherwise the word stays dynamic.

        Resolved: `$X` assigned a literal once before, `$(echo rm)`, `${IFS}`; in the command word also `$'\\x72m'`
        and `{rm,-rf,/}`, and a glob there (`/bin/r?`) makes it dynamic.
        """
        base = self.arg(node)
        written = self.source(node)
        parts = _parts(node)
        unquoted = not parts and not any(q in written for q in "'\"\\")
        value: str | None = None
        if parts:
            value = self.resolve(node.word, parts)
        if not command:
            pass
        elif written.startswith("$'") and written.endswith("'") and len(written) > 3:
            try:
                value = codecs.decode(written[2:-1], "unicode_escape")
            except UnicodeDecodeError:
                value = None
        elif unquoted and _has_braces(node.word):
            expanded = _brace_expand(node.word)
            if not expanded:
                return [replace(base, dynamic=True)]
            value = " ".join(expanded)
        elif unquoted and _is_glob(node.word):
            return [replace(base, dynamic=True)]
        if value is None or not value.split():
            return [base]
        if '"' in written:
            return [Arg(value, base.start, base.end)]
        return [Arg(w, base.start, base.end) for w in value.split()]

    def resolve(self, word: str, parts: list[Any]) -> str | None:
        """`word` with its expansions replaced by values known statically, or None if one is not known."""
        for part in parts:
            if part.kind == "tilde":
                continue
            raw = self.parsed[part.pos[0] : part.pos[1]]
            value: str | None = None
            if part.kind == "parameter":
                name = getattr(part, "value", "")
                value = self.variables.get(name, " " if name == "IFS" and name not in self.unknown else None)
            elif part.kind == "commandsubstitution":
                value = self.echoed(part.command)
            if value is None or raw not in word:
                return None
            word = word.replace(raw, value, 1)
        return word

    def echoed(self, node: Any, stdin_text: str | None = None) -> str | None:
        """What `node` prints, if that is known statically (`echo rm`, `cat <<EOF`, `base64 -d` of known input)."""
        if node.kind != "command":
            return None
        words = [p for p in node.parts if p.kind == "word"]
        redirects = [p for p in node.parts if p.kind == "redirect"]
        if any(_parts(w) for w in words) or len(words) + len(redirects) != len(node.parts) or not words:
            return None
        if any(r.type in _WRITES and hasattr(r.output, "kind") for r in redirects):
            return None
        if redirects:
            stdin_text = self.input_of(redirects, _Where(stdin_text=stdin_text)).stdin_text
        return literal_output(unwrap([Arg(w.word) for w in words]).core, stdin_text)

    def assign(self, node: Any) -> None:
        name, _, value = node.word.partition("=")
        name = name.rstrip("+")
        if _parts(node) or node.word[len(name)] == "+" or name in self.variables or name in self.unknown:
            self.forget(name)
        else:
            self.variables[name] = value

    def forget(self, word: str) -> None:
        """Stop resolving a variable whose value may be set at run time or in more than one place."""
        name = word.partition("=")[0].rstrip("+")
        if name.replace("_", "a").isalnum():
            self.variables.pop(name, None)
            self.unknown.add(name)

    # -- redirections ----------------------------------------------------------------------------------------------

    def redirect(self, node: Any, where: _Where) -> None:
        target = node.output
        if not hasattr(target, "kind"):
            return  # a file descriptor (2>&1)
        self.word(target)
        if node.type in _WRITES or node.type == "<":
            if _substitutions(target) and target.word.startswith((">(", "<(")):
                return  # process substitution, walked above
            if node.type == ">&" and (target.word == "-" or target.word.isdigit()):
                return
            if node.type in _WRITES:
                finding = write_target(target.word, append=node.type in (">>", "&>>"), what="The redirection")
                self.analysis.finding(finding, self.source(node))
            resolved = self.resolved(target, command=False)
            if len(resolved) == 1:
                placed = self.analysis.paths.redirect(resolved[0], write=node.type in _WRITES)
                if placed is not None:
                    self.analysis.finding(placed, self.source(node))
        elif node.type in ("<<", "<<-"):
            body, quoted = self.here_document(node)
            if not quoted and ("$(" in body or "`" in body):
                self.analysis.script(_here_document_word(body), _Where(), self.depth + 1)

    def here_document(self, node: Any) -> tuple[str, bool]:
        """A here-document's body (without the delimiter line) and whether its delimiter was quoted."""
        delimiter_source = self.source(node.output)
        quoted = any(q in delimiter_source for q in "'\"\\")
        heredoc = getattr(node, "heredoc", None)
        body = heredoc.value if heredoc is not None else ""
        lines = body.split("\n")
        if lines and lines[-1].strip() == _unquote(node.output.word):
            lines = lines[:-1]
        return "\n".join(lines), quoted

    def input_of(self, redirects: list[Any], where: _Where) -> _Where:
        for node in redirects:
            if node.type in ("<<", "<<-"):
                where = replace(where, stdin="file", stdin_text=self.here_document(node)[0])
            elif node.type == "<<<" and hasattr(node.output, "word"):
                where = replace(where, stdin="file", stdin_text=node.output.word)
            elif node.type == "<" and hasattr(node.output, "word"):
                fetches = any(_fetches(s.command) for s in _substitutions(node.output))
                where = replace(where, stdin="network" if fetches else "file", stdin_text=None)
        return where

    # -- simple commands -------------------------------------------------------------------------------------------

    def simple(self, args: Sequence[Arg], where: _Where, fragment: str) -> None:
        """Judge one simple command: configured patterns, wrappers, the rules, and what it runs in turn."""
        analysis = self.analysis
        unwrapped = unwrap(args)
        full = " ".join(a.text for a in args)
        core = " ".join(a.text for a in unwrapped.core)
        denied = analysis.matching(analysis.deny, full, core)
        if denied is not None:
            detail = f"Your configuration denies commands matching {denied!r}."
            analysis.record("dangerous", "denied_by_config", detail, fragment)
            return
        allowed_full = analysis.matching(analysis.allow, full)
        allowed = allowed_full or analysis.matching(analysis.allow, core)
        for finding in unwrapped.findings:
            self.emit(finding, allowed_full, fragment)
        for script in unwrapped.scripts:
            analysis.script(script.text, _Where(bulk=where.bulk), self.depth + 1)
        if not unwrapped.core:
            return
        name = "" if unwrapped.core[0].dynamic else command_name(unwrapped.core[0].text)
        if where.function is not None and name == where.function and where.concurrent:
            detail = f"The function {name} starts copies of itself without end (a fork bomb)."
            analysis.record("dangerous", "fork_bomb", detail, self.functions[name])
            return
        if name in self.functions and not has_rule(name):
            analysis.record("safe", "defined_function", f"{name} is a function defined and checked above.", fragment)
            return
        context = Context(stdin=where.stdin, stdin_text=where.stdin_text, bulk=where.bulk)
        for outcome in judge(unwrapped.core, context):
            if isinstance(outcome, Finding):
                self.emit(outcome, allowed, fragment)
            elif isinstance(outcome, Nested):
                nested = self.text[outcome.args[0].start : outcome.args[-1].end] if outcome.args[0].end else fragment
                self.simple(outcome.args, _Where(bulk=outcome.bulk), nested)
            else:
                analysis.script(outcome.text, _Where(bulk=outcome.bulk), self.depth + 1)
        for finding in analysis.paths.command(unwrapped.core):
            self.emit(finding, allowed, fragment)

    def emit(self, finding: Finding, allowed: str | None, fragment: str) -> None:
        if allowed is not None and finding.verdict != "dangerous":
            detail = f"Your configuration allows commands matching {allowed!r}."
            self.analysis.record("safe", "allowed_by_config", detail, fragment)
        else:
            self.analysis.finding(finding, fragment)
