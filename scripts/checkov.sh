#!/usr/bin/env bash
# Scans the synthesized CloudFormation templates with checkov, an IaC scanner this project did not
# write: the reference app (cdk synth) and a user's app with the README's RerunPipeline call. Every
# finding fails the run unless .checkov.yaml skips it with its reason. Needs no network, no Docker and
# no AWS credentials. Called by .ci/run, beside cdk-nag (at synth) and cfn-lint (scripts/cfn-lint.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
export CDK_DISABLE_CLI_TELEMETRY=true

# checkov at its pins (requirements/checkov.txt), in the project's .venv/checkov (installed once).
python="$(npx tsx scripts/install-python-tools.ts checkov)"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
npx cdk synth --quiet --output "$out/reference"
npx tsx scripts/synthPipelineApp.ts "$out/pipeline"

shopt -s nullglob
templates=("$out"/reference/*.template.json "$out"/pipeline/*.template.json)
if [ ${#templates[@]} -lt 2 ]; then
  echo "synth produced ${#templates[@]} template(s) in $out, expected the reference app's and the pipeline app's" >&2
  exit 1
fi
args=()
for t in "${templates[@]}"; do args+=(--file "$t"); done
# No telemetry, no update check, no download of external checks: the scan runs offline.
export BC_SKIP_MAPPING=TRUE CHECKOV_RUN_SCA_PACKAGE_SCAN_V2=false
"$(dirname "$python")/checkov" --config-file .checkov.yaml --framework cloudformation --quiet --compact \
  --skip-download "${args[@]}"
echo "checkov: ${#templates[@]} template(s) passed ($("$(dirname "$python")/checkov" --version))"
