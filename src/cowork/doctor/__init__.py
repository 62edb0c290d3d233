"""`cowork doctor`: check the machine and the configuration, without a server, and say how to fix what is wrong.

`_checks` looks at the machine (Python, the state folder and its disk, the sandbox, git, ripgrep, a running server),
`_setup` at the configuration as the server would read it (config files, providers, MCP servers), `_report` runs
them in order and prints the verdicts. Each check returns `Check` values and changes nothing. See docs/doctor.md.
"""

from ._checks import Check, Status
from ._report import exit_code, main, render_text, run_checks

__all__ = ["Check", "Status", "exit_code", "main", "render_text", "run_checks"]
