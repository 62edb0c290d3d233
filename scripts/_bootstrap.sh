# Sourced by scripts/cowork and scripts/test: makes sure uv is available and the locked environment is installed.
# Works on a fresh machine with Python >= 3.11 and access to PyPI; nothing else is assumed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UV_VERSION="0.13.9"
# Prefer the machine's own Python; uv only fetches one if none of 3.11+ is installed.
export UV_PYTHON_PREFERENCE="${UV_PYTHON_PREFERENCE:-system}"
# Use the operating system's certificate store (machines behind a TLS-inspecting proxy add their CA there).
export UV_SYSTEM_CERTS="${UV_SYSTEM_CERTS:-1}"
export UV_PROJECT_ENVIRONMENT="${UV_PROJECT_ENVIRONMENT:-$ROOT/.venv}"

# One bootstrap at a time: the README starts the mock model in the background and Cowork right after it, and two
# installs into the same .tools/ at once leave it broken. (flock is part of util-linux; without it, no lock.)
if command -v flock >/dev/null 2>&1; then
  exec 9>"$ROOT/.bootstrap.lock"
  flock 9
fi

if command -v uv >/dev/null 2>&1; then
  UV="$(command -v uv)"
elif [ -x "$ROOT/.tools/bin/uv" ]; then
  UV="$ROOT/.tools/bin/uv"
else
  PYTHON="$(command -v python3 || command -v python || true)"
  if [ -z "$PYTHON" ]; then
    echo "cowork: Python 3.11 or newer is needed (python3 not found)." >&2
    exit 1
  fi
  echo "cowork: installing uv $UV_VERSION into .tools/ (once)…" >&2
  "$PYTHON" -m venv "$ROOT/.tools"
  "$ROOT/.tools/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
  UV="$ROOT/.tools/bin/uv"
fi

# Bytecode is compiled at install time: some machines set PYTHONDONTWRITEBYTECODE, and every process
# (each server a test starts) would otherwise compile a few thousand modules from source.
if [ ! -x "$UV_PROJECT_ENVIRONMENT/bin/python" ]; then
  echo "cowork: installing Python dependencies into .venv/ (first run, about a minute)…" >&2
fi
"$UV" sync --frozen --quiet --compile-bytecode --project "$ROOT"
if command -v flock >/dev/null 2>&1; then
  exec 9>&-  # released (and not inherited by the command the script runs next)
fi
