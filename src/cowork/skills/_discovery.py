"""Skill discovery: SKILL.md folders in the workspace, in Cowork's home, and built in; earlier ones win."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio.to_thread

__all__ = [
    "BUILTIN_SKILLS_DIR",
    "DiscoveryResult",
    "Skill",
    "SkillFormatError",
    "SkillProblem",
    "SkillSource",
    "discover_skills",
    "load_skills",
    "parse_skill",
    "render_skill_list",
    "skill_roots",
    "split_front_matter",
]

SkillSource = Literal["workspace", "user", "builtin"]

BUILTIN_SKILLS_DIR = Path(__file__).parent / "builtin"
MAX_SKILL_BYTES = 1024 * 1024
MAX_NAME_CHARS = 64
_CACHE_SIZE = 32


class SkillFormatError(ValueError):
    """A SKILL.md that cannot be used; the message says what is wrong with it."""


@dataclass(frozen=True)
class Skill:
    """A discovered skill: its front matter and where its SKILL.md is."""

    name: str
    description: str
    triggers: tuple[str, ...]
    path: Path
    """The SKILL.md file; the other files of the skill are in its folder."""
    source: SkillSource

    @property
    def folder(self) -> Path:
        return self.path.parent


@dataclass(frozen=True)
class SkillProblem:
    """A SKILL.md that was skipped, and why."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class DiscoveryResult:
    """The usable skills in precedence order, and the SKILL.md files that were skipped."""

    skills: tuple[Skill, ...] = ()
    problems: tuple[SkillProblem, ...] = ()

    def get(self, name: str) -> Skill | None:
        """The skill called `name` (exactly, else ignoring case), or None."""
        exact = next((s for s in self.skills if s.name == name), None)
        if exact is not None:
            return exact
        folded = name.strip().casefold()
        return next((s for s in self.skills if s.name.casefold() == folded), None)

    def names(self) -> list[str]:
        return [s.name for s in self.skills]


def skill_roots(workspace: Path, home: Path | None) -> list[tuple[SkillSource, Path]]:
    """The folders searched for `<name>/SKILL.md`, highest precedence first."""
    roots: list[tuple[SkillSource, Path]] = [("workspace", workspace / ".cowork" / "skills")]
    if home is not None:
        roots.append(("user", home / "skills"))
    roots.append(("builtin", BUILTIN_SKILLS_DIR))
    return roots


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML front matter (as a mapping) and the markdown body after it.

    Raises:
        SkillFormatError: no front matter, unclosed front matter, invalid YAML, or not a mapping.
    """
    import yaml  # loads with the first skill read, not with the skill tool at start-up

    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError("it must start with a '---' line opening YAML front matter (name, description)")
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() in ("---", "...")), None)
    if end is None:
        raise SkillFormatError("the YAML front matter is not closed by a '---' line")
    try:
        data = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise SkillFormatError("invalid YAML front matter: " + " ".join(str(exc).split())) from None
    if not isinstance(data, dict):
        raise SkillFormatError("the front matter must be a YAML mapping with `name` and `description`")
    return data, "".join(lines[end + 1 :]).lstrip("\r\n")


def _text_field(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SkillFormatError(f"the front matter needs a non-empty string `{key}`")
    return " ".join(value.split())


def parse_skill(text: str, path: Path, source: SkillSource) -> Skill:
    """A skill from the text of its SKILL.md.

    Raises:
        SkillFormatError: the front matter is missing, invalid, or lacks `name` or `description`.
    """
    data, _body = split_front_matter(text)
    name = _text_field(data, "name")
    if len(name) > MAX_NAME_CHARS:
        raise SkillFormatError(f"`name` is longer than {MAX_NAME_CHARS} characters")
    description = _text_field(data, "description")
    raw = data.get("triggers")
    if raw is None:
        triggers: tuple[str, ...] = ()
    elif isinstance(raw, str):
        triggers = (raw.strip(),) if raw.strip() else ()
    elif isinstance(raw, list) and all(isinstance(t, str | int | float) for t in raw):
        triggers = tuple(str(t).strip() for t in raw if str(t).strip())
    else:
        raise SkillFormatError("`triggers` must be a list of strings")
    return Skill(name=name, description=description, triggers=triggers, path=path, source=source)


def _candidates(workspace: Path, home: Path | None) -> list[tuple[SkillSource, Path]]:
    found: list[tuple[SkillSource, Path]] = []
    for source, root in skill_roots(workspace, home):
        try:
            with os.scandir(root) as entries:
                names = sorted(entry.name for entry in entries if entry.is_dir())
        except OSError:
            continue  # a missing root is normal
        found += [(source, root / name / "SKILL.md") for name in names if not name.startswith(".")]
    return found


def _fingerprint(candidates: list[tuple[SkillSource, Path]]) -> tuple[tuple[str, int, int], ...]:
    stamps: list[tuple[str, int, int]] = []
    for _source, path in candidates:
        try:
            info = path.stat()
        except OSError:
            continue
        stamps.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(stamps)


def _scan(workspace: Path, candidates: list[tuple[SkillSource, Path]]) -> DiscoveryResult:
    skills: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    for source, path in candidates:
        if not path.is_file():
            continue
        if source == "workspace" and workspace not in path.resolve().parents:
            # A project's skill must not pull in a file from elsewhere (a link to a secret, say).
            problems.append(SkillProblem(path, "it links to a file outside the workspace, so it is ignored"))
            continue
        try:
            if path.stat().st_size > MAX_SKILL_BYTES:
                raise SkillFormatError(f"it is larger than {MAX_SKILL_BYTES // 1024} KiB")
            skill = parse_skill(path.read_text(encoding="utf-8"), path, source)
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(SkillProblem(path, f"it cannot be read ({exc})"))
            continue
        except SkillFormatError as exc:
            problems.append(SkillProblem(path, str(exc)))
            continue
        winner = skills.get(skill.name.casefold())
        if winner is None:
            skills[skill.name.casefold()] = skill
        elif winner.source == source:
            problems.append(SkillProblem(path, f"another {source} skill is already named {skill.name!r}"))
        # else: a skill from a later (lower-precedence) root is overridden, which is the point of the layers.
    return DiscoveryResult(tuple(skills.values()), tuple(problems))


_cache: OrderedDict[tuple[Path, Path | None], tuple[tuple[tuple[str, int, int], ...], DiscoveryResult]]
_cache = OrderedDict()
_cache_lock = threading.Lock()


def discover_skills(workspace: Path, home: Path | None) -> DiscoveryResult:
    """Find the skills of a workspace, highest precedence first: workspace, user (`home`), built-in.

    Blocking (it reads the disk); use `load_skills` from async code. Results are cached per
    (workspace, home) until a SKILL.md is added, removed or modified. A bad SKILL.md is never fatal: it is
    skipped and reported in `problems`.
    """
    workspace = workspace.resolve()
    home = home.resolve() if home is not None else None
    candidates = _candidates(workspace, home)
    stamp = _fingerprint(candidates)
    key = (workspace, home)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] == stamp:
            _cache.move_to_end(key)
            return cached[1]
    result = _scan(workspace, candidates)
    with _cache_lock:
        _cache[key] = (stamp, result)
        _cache.move_to_end(key)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return result


async def load_skills(workspace: Path, home: Path | None) -> DiscoveryResult:
    """`discover_skills` in a worker thread, off the event loop."""
    return await anyio.to_thread.run_sync(discover_skills, workspace, home)


def render_skill_list(skills: tuple[Skill, ...] | list[Skill]) -> str:
    """The skills as a markdown list for the system prompt; empty when there are none."""
    lines = []
    for skill in skills:
        line = f"- **{skill.name}**: {skill.description}"
        if skill.triggers:
            line += f" (triggers: {', '.join(skill.triggers)})"
        lines.append(line)
    return "\n".join(lines)
