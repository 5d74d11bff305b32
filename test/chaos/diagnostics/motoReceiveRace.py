"""Does moto's threaded server count SQS receives that no client sees? (test/chaos/README.md, issue 33)

Run with the project's moto: `.venv/moto/bin/python test/chaos/diagnostics/motoReceiveRace.py [seconds] [threads]`.
Many threads call ReceiveMessage (2 messages, no wait) on one standard queue with a 1 s visibility timeout
and never delete, as the chaos runners do under load when invocations time out. At the end it compares
each message's ApproximateReceiveCount (moto's own count) with the receives the clients were handed.

moto 5.2.1's receive_message takes no lock: inside its loop, after it has marked earlier messages
received, it rebuilds the set of pending message groups by iterating the queue's pending set while
another request adds to it ("RuntimeError: Set changed size during iteration", a 500). The messages
already marked keep the receive on their count, and nobody holds them.
"""
import collections
import sys
import threading
import time

import boto3
import botocore
from moto.server import ThreadedMotoServer
from moto.sqs.models import sqs_backends

PORT = 5599
server = ThreadedMotoServer(ip_address="127.0.0.1", port=PORT)
server.start()
# Retries on: a 500 is retried as the SDK does, and the retry's messages are counted as seen.
config = botocore.config.Config(region_name="us-east-1")


def client():
    return boto3.client(
        "sqs", endpoint_url=f"http://127.0.0.1:{PORT}", aws_access_key_id="x", aws_secret_access_key="x", config=config
    )


sqs = client()
url = sqs.create_queue(QueueName="q", Attributes={"VisibilityTimeout": "1"})["QueueUrl"]
ids = [sqs.send_message(QueueUrl=url, MessageBody=str(i))["MessageId"] for i in range(40)]
seen = collections.Counter()
errors = collections.Counter()
lock = threading.Lock()
end = time.time() + float(sys.argv[1] if len(sys.argv) > 1 else 30)


def receiver():
    c = client()
    while time.time() < end:
        try:
            answer = c.receive_message(QueueUrl=url, MaxNumberOfMessages=2, WaitTimeSeconds=0)
            with lock:
                for m in answer.get("Messages", []):
                    seen[m["MessageId"]] += 1
        except Exception as e:  # noqa: BLE001 (counted and shown)
            with lock:
                errors[str(e)[:120]] += 1


threads = [threading.Thread(target=receiver) for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 32)]
for t in threads:
    t.start()
for t in threads:
    t.join()
queue = sqs_backends["123456789012"]["us-east-1"].queues["q"]
counted = {m.id: m.approximate_receive_count for m in queue._messages}
unseen = sum(counted[i] - seen[i] for i in ids)
print(f"receives handed to clients {sum(seen.values())}, counted by moto {sum(counted.values())}, counted but unseen {unseen}")
print(f"client errors after the SDK's retries: {dict(errors)}")
server.stop()
