#!/usr/bin/env bash
# Builds the API reference (npm run docs) into api-docs/ (git-ignored) from the package's entry points
# (typedoc.json), with TypeDoc at its pins in tools/typedoc/ (installed here on first use: TypeDoc reads
# the sources through the TypeScript 5 compiler API, which the project's TypeScript 7 does not have).
# A warning fails the build (treatWarningsAsErrors): a broken {@link} or an exported type that
# references one no entry exports.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x tools/typedoc/node_modules/.bin/typedoc ]; then
  npm ci --prefix tools/typedoc --no-audit --no-fund --loglevel error
fi
tools/typedoc/node_modules/.bin/typedoc --options typedoc.json "$@"
