"""Starts MiniStack for the deployed tier when it enforces IAM (AUTH=true, USE_SSL=1), with two
adjustments, then runs MiniStack's own entry point; the policy evaluation stays MiniStack's.

1. The S3 condition keys of conditional requests go into its IAM request context.

MiniStack's IAM evaluator (AUTH=true) builds an S3 request's condition keys in
`ministack.core.iam_actions.s3_service_context`, and in 1.5.33 that context never holds
`s3:if-match`, `s3:if-none-match` or `s3:ObjectCreationOperation`. Policies that use them then
decide the wrong way: the conditional-delete statement (`Null s3:if-match = true` denies) denies
every DeleteObject, also the ones that carry If-Match, and the conditional-write statement (which
needs `s3:ObjectCreationOperation = true`) never denies. This wrapper adds the keys as S3 does
(S3 User Guide, "Enforce conditional writes" and "Enforce conditional deletes"), from the headers
of the request, and then runs MiniStack's own entry point; the evaluation itself stays MiniStack's.

- `s3:if-none-match` and `s3:if-match`: the request's If-None-Match and If-Match headers, on the
  requests that create an object and on DeleteObject.
- `s3:ObjectCreationOperation`: "true" on the requests that create the object, PutObject (CopyObject
  included) and CompleteMultipartUpload; absent on CreateMultipartUpload and UploadPart, which are
  authorized as s3:PutObject too.

2. No second listener on port 443. With USE_SSL, MiniStack also binds 443 whenever it can (for
   Cognito token issuers); the tier uses its own port only, and two tiers on one machine must not
   meet there.

The deployed tier (local/emulator/ministackServer.ts) starts MiniStack through it when it enforces IAM.
"""

import sys

from ministack.core import iam_actions

_original_s3_service_context = iam_actions.s3_service_context


def _first(query_params, name):
    value = (query_params or {}).get(name)
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _header(headers, name):
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return value
    return None


def s3_service_context(iam_action, query_params, path="", headers=None):
    context = dict(_original_s3_service_context(iam_action, query_params, path, headers))
    has_key = len([p for p in path.split("/") if p]) >= 2
    if not has_key or iam_action not in ("s3:PutObject", "s3:DeleteObject"):
        return context
    query = query_params or {}
    if iam_action == "s3:PutObject":
        if "uploads" in query or _first(query, "partNumber") is not None:
            return context  # CreateMultipartUpload, UploadPart: they create no object
        context["s3:ObjectCreationOperation"] = "true"
        names = ("if-none-match", "if-match")
    else:
        names = ("if-match",)
    for name in names:
        value = _header(headers, name)
        if value is not None:
            context[f"s3:{name}"] = value
    return context


iam_actions.s3_service_context = s3_service_context

if __name__ == "__main__":
    from ministack import app

    _port_is_bindable = app._port_is_bindable
    app._port_is_bindable = lambda host, port: port != 443 and _port_is_bindable(host, port)
    sys.argv[0] = "ministack"
    sys.exit(app.main())
