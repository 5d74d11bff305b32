#!/usr/bin/env bash
# Synthesizes the CDK app and lints every CloudFormation template it produces with cfn-lint.
# Needs no network, no Docker and no AWS credentials: the stack is environment-agnostic and
# NodejsFunction bundles with the local esbuild (a devDependency). Called by .ci/run.
#
# The synth itself also runs cdk-nag (AwsSolutions) and CDK's built-in CloudFormation validation
# (cdk.json sets @aws-cdk/core:validateAgainstDefaultRules), so any finding there fails first.
set -euo pipefail
cd "$(dirname "$0")/.."
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
export CDK_DISABLE_CLI_TELEMETRY=true

# cfn-lint at its pins (requirements/cfn-lint.txt), in the project's .venv/cfn-lint (installed once).
python="$(npx tsx scripts/install-python-tools.ts cfn-lint)"
cfn_lint() { "$(dirname "$python")/cfn-lint" "$@"; }

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
npx cdk synth --quiet --output "$out"

shopt -s nullglob
templates=("$out"/*.template.json)
if [ ${#templates[@]} -eq 0 ]; then
  echo "cdk synth produced no template in $out" >&2
  exit 1
fi

# W3005 (redundant DependsOn) is ignored: CDK itself adds DependsOn next to Ref/GetAtt for a
# function's role and the bucket-notification custom resource; it is harmless and not ours to edit.
# Everything else, warnings included, fails the run.
cfn_lint --ignore-checks W3005 -- "${templates[@]}"
echo "cfn-lint: ${#templates[@]} template(s) passed ($(cfn_lint --version))"
