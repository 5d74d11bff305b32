"""moto server whose conditional writes are atomic, as they are on AWS.

DynamoDB applies a conditional write atomically per item, and S3 applies If-None-Match / If-Match
atomically per key. moto 5.2.1 does not: it checks the condition and then writes, without a lock,
while its threaded HTTP server runs requests in parallel (with 8 clients racing on one new
DynamoDB key, 2 keys in 200 had two winners). rerun's guarantees rest on those atomic writes, so
the emulator must have them too: this wrapper runs every write (DynamoDB, and S3 PUT/POST/DELETE)
one at a time. Reads stay concurrent.

SQS calls run one at a time too, except while a long poll waits. moto 5.2.1's receive_message walks
and changes a queue's in-flight set without a lock, so two receives at once (or a receive beside a
delete) can fail with "Set changed size during iteration": a 500 after some messages were already
marked received, whose receives then count towards maxReceiveCount with nobody holding them (a
healthy message dead-lettered early; test/chaos/README.md). On AWS a receive is atomic. The SQS lock
is released while a long poll waits for messages (Queue.wait_for_messages), so a long poll never
blocks the other calls.

Usage: python3 atomicMotoServer.py -H 127.0.0.1 -p PORT
"""

import argparse
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from moto.sqs.models import Queue
from werkzeug.serving import run_simple

DYNAMODB_READS = ("GetItem", "BatchGetItem", "Query", "Scan", "DescribeTable", "ListTables", "DescribeTimeToLive")


SQS_LOCK = threading.Lock()
# Whether this thread holds SQS_LOCK (a Lock has no owner to ask).
HOLDS_SQS_LOCK = threading.local()


def is_sqs(environ) -> bool:
    return environ.get("HTTP_X_AMZ_TARGET", "").startswith("AmazonSQS.")


def wait_unlocked(wait_for_messages):
    """Queue.wait_for_messages with the SQS lock released while it waits (its caller holds it)."""

    def wait(self, timeout):
        if not getattr(HOLDS_SQS_LOCK, "value", False):
            return wait_for_messages(self, timeout)
        SQS_LOCK.release()
        try:
            return wait_for_messages(self, timeout)
        finally:
            SQS_LOCK.acquire()

    return wait


def is_write(environ) -> bool:
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    if target.startswith("DynamoDB_"):
        return target.split(".", 1)[-1] not in DYNAMODB_READS
    if target:
        return False  # other JSON-protocol services (SQS has its own lock, above)
    return environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE")  # S3 writes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, required=True)
    args = parser.parse_args()

    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    Queue.wait_for_messages = wait_unlocked(Queue.wait_for_messages)

    def atomic_writes(environ, start_response):
        if is_sqs(environ):
            with SQS_LOCK:
                HOLDS_SQS_LOCK.value = True
                try:
                    return list(app(environ, start_response))
                finally:
                    HOLDS_SQS_LOCK.value = False
        if not is_write(environ):
            return app(environ, start_response)
        with lock:
            # Drain the response inside the lock so check-and-write is one step.
            return list(app(environ, start_response))

    run_simple(args.host, args.port, atomic_writes, threaded=True)


if __name__ == "__main__":
    main()
