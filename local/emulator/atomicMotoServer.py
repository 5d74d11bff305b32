"""moto server whose conditional writes are atomic, as they are on AWS.

DynamoDB applies a conditional write atomically per item, and S3 applies If-None-Match / If-Match
atomically per key. moto 5.2.1 does not: it checks the condition and then writes, without a lock,
while its threaded HTTP server runs requests in parallel (with 8 clients racing on one new
DynamoDB key, 2 keys in 200 had two winners). rerun's guarantees rest on those atomic writes, so
the emulator must have them too: this wrapper runs every write (DynamoDB, and S3 PUT/POST/DELETE)
one at a time. Reads and SQS calls stay concurrent, so SQS long polls never block the others.

Usage: python3 atomicMotoServer.py -H 127.0.0.1 -p PORT
"""

import argparse
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

DYNAMODB_READS = ("GetItem", "BatchGetItem", "Query", "Scan", "DescribeTable", "ListTables", "DescribeTimeToLive")


def is_write(environ) -> bool:
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    if target.startswith("DynamoDB_"):
        return target.split(".", 1)[-1] not in DYNAMODB_READS
    if target:
        return False  # other JSON-protocol services (SQS): concurrent, long polls included
    return environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE")  # S3 writes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, required=True)
    args = parser.parse_args()

    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def atomic_writes(environ, start_response):
        if not is_write(environ):
            return app(environ, start_response)
        with lock:
            # Drain the response inside the lock so check-and-write is one step.
            return list(app(environ, start_response))

    run_simple(args.host, args.port, atomic_writes, threaded=True)


if __name__ == "__main__":
    main()
