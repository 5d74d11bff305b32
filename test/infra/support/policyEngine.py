"""Evaluates IAM requests against the policies of a synthesized template with MiniStack's IAM
evaluator (ministack.core.iam_evaluator), used as a library: the same engine that judges the
deployed tier's requests under AUTH=true, asked about requests that tier cannot make or that
MiniStack does not check live (CloudWatch to SNS, EventBridge to SQS, KMS use by services).

Reads one JSON document on stdin, {"requests": [...]}, and writes {"results": [...]} on stdout,
one result per request, in order. A request:

  principal    {"arn", "type", "account"} of a caller (an assumed-role session), or
               {"service": "s3.amazonaws.com"} of an AWS service acting on its own
  action       "s3:PutObject"
  resource     the resource ARN
  context      condition keys of the request ("s3:if-match", "aws:SourceArn", ...)
  secureTransport  whether the request came over TLS (aws:SecureTransport)
  identityPolicies  the caller's policy documents (callers only)
  resourcePolicy    the resource's own policy document, or null
  resourceOwner     the account that owns the resource
  keyPolicy         true for a KMS key: its policy must allow even the owner's principals

Each evaluation mirrors MiniStack's own call sites: a caller as `enforce()` does after it has
resolved the principal (identity policies, then `combine_resource_policy`), a service as
`queue_policy_allows` / `topic_policy_allows` do (`evaluate_resource_policy` with the service).
"""

import json
import sys

from ministack.core.iam_evaluator import (
    EvalContext,
    combine_resource_policy,
    evaluate,
    evaluate_resource_policy,
    parse_policy_document,
)

REGION = "us-east-1"


def decide(request):
    principal = request["principal"]
    context = {key.lower(): value for key, value in (request.get("context") or {}).items()}
    secure = bool(request.get("secureTransport", True))
    if "service" in principal:
        # The service is the caller: an account principal must not match it, "*" does.
        ctx = EvalContext(
            principal_arn="*", principal_type="Service", principal_account="",
            action=request["action"], resource_arn=request["resource"], region=REGION,
            secure_transport=secure, service_context=context,
        )
        policy = request.get("resourcePolicy")
        if not policy:
            return {"decision": "ImplicitDeny", "sid": "", "reason": "no resource policy"}
        result = evaluate_resource_policy(policy, ctx, service=principal["service"])
    else:
        ctx = EvalContext(
            principal_arn=principal["arn"], principal_type=principal.get("type", "AssumedRole"),
            principal_account=principal["account"], action=request["action"],
            resource_arn=request["resource"], region=REGION, secure_transport=secure,
            service_context=context,
        )
        identity = [parse_policy_document(doc) for doc in request.get("identityPolicies") or []]
        result = evaluate(ctx, [stmts for stmts in identity if stmts])
        if "resourcePolicy" in request:
            result = combine_resource_policy(
                result, ctx, request["resourcePolicy"], request.get("resourceOwner"),
                required=bool(request.get("keyPolicy")),
            )
    return {"decision": result.decision, "sid": result.matched_sid, "reason": result.reason}


def main():
    requests = json.load(sys.stdin)["requests"]
    json.dump({"results": [decide(r) for r in requests]}, sys.stdout)


if __name__ == "__main__":
    main()
