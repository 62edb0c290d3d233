"""Cowork's document toolbox: a Python environment, built by Cowork from a lock it ships, that shell commands use.

It holds maintained libraries for the four document formats and for charts (openpyxl, python-docx, python-pptx,
pypdf, pdfplumber, reportlab, matplotlib, pillow), pinned with their hashes in `requirements.txt`. Cowork installs it
(in the background after the server starts, or with `cowork toolbox install`); the model never does. Once ready,
the `bash` tool puts its `bin/` first on PATH and names its interpreter in `COWORK_PYTHON`; inside the sandbox it is
the one read-only part of Cowork's otherwise masked home. LibreOffice is not in it: found on PATH when the machine
has it (conversions, recalculating formulas).
"""

from ._background import InstallState, ToolboxInstaller
from ._toolbox import (
    DEFAULT_IMPORTS,
    LIBREOFFICE_MISSING,
    REQUIREMENTS,
    Progress,
    Toolbox,
    ToolboxCancelled,
    ToolboxError,
    ToolboxState,
    ToolboxStatus,
    find_libreoffice,
    find_uv,
)

__all__ = [
    "DEFAULT_IMPORTS",
    "LIBREOFFICE_MISSING",
    "REQUIREMENTS",
    "InstallState",
    "Progress",
    "Toolbox",
    "ToolboxCancelled",
    "ToolboxError",
    "ToolboxInstaller",
    "ToolboxState",
    "ToolboxStatus",
    "find_libreoffice",
    "find_uv",
]
