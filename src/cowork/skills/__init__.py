"""Skills: folders with a SKILL.md (YAML front matter, then instructions) that the agent loads on demand.

Discovered from `<workspace>/.cowork/skills/`, then `<home>/skills/`, then the built-in ones shipped here;
an earlier layer's skill wins over a later one of the same name.
"""

from ._discovery import (
    BUILTIN_SKILLS_DIR,
    DiscoveryResult,
    Skill,
    SkillFormatError,
    SkillProblem,
    SkillSource,
    discover_skills,
    load_skills,
    parse_skill,
    render_skill_list,
    skill_roots,
    split_front_matter,
)

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
