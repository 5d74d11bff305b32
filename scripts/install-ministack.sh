#!/usr/bin/env bash
# Installs MiniStack (the deployed tier's emulator) into the project-local virtual environment
# .venv/ministack, at the exact versions of requirements/ministack.txt. Idempotent: when the venv
# already holds exactly that list it returns at once (one pip freeze, about a second).
#
#   bash scripts/install-ministack.sh          # then: .venv/ministack/bin/ministack
#
# RERUN_PYTHON picks the interpreter that creates the venv (default python3; MiniStack needs >= 3.10).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv/ministack
requirements=requirements/ministack.txt
python=${RERUN_PYTHON:-python3}
# The pinned list without comments and blank lines, sorted case-insensitively like pip freeze.
wanted=$(grep -v -e '^#' -e '^[[:space:]]*$' "$requirements" | sort -f)

installed() {
  "$venv/bin/python" -m pip freeze --all 2>/dev/null | grep -v -i -e '^pip==' -e '^setuptools==' -e '^wheel==' | sort -f
}

if [ -x "$venv/bin/python" ] && [ "$(installed)" = "$wanted" ]; then
  exit 0
fi

if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "install-ministack: MiniStack needs Python 3.10 or later; $python is $("$python" --version 2>&1). Set RERUN_PYTHON to a newer interpreter." >&2
  exit 1
fi
echo "install-ministack: installing the packages of $requirements into $venv" >&2
# A venv left half-made or with other versions is rebuilt, so no stray package survives.
rm -rf "$venv"
"$python" -m venv "$venv"
# --no-deps: the file lists every package; pip must not resolve (and float) anything else.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$requirements"
"$venv/bin/python" -m pip check >&2
if [ "$(installed)" != "$wanted" ]; then
  echo "install-ministack: $venv does not hold exactly the packages of $requirements after the install:" >&2
  diff <(echo "$wanted") <(installed) >&2 || true
  exit 1
fi
