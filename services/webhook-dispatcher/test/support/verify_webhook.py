"""Checks a delivery's two signature headers as a Python receiver would, with none of our code.

Reads {"secret", "headers", "body"} as JSON on stdin; prints whether one of the signatures of
X-Service-Signature, and one of webhook-signature, match the secret.
"""
import base64
import hashlib
import hmac
import json
import sys

request = json.load(sys.stdin)
key = base64.b64decode(request["secret"].removeprefix("whsec_"), validate=True)
headers = {name.lower(): value for name, value in request["headers"].items()}
body = request["body"].encode("utf-8")


def digest(prefix):
    return hmac.new(key, prefix.encode("utf-8") + body, hashlib.sha256).digest()


def any_matches(expected, header):
    return any(hmac.compare_digest(expected.encode(), given.encode()) for given in header.split(" "))


service = "sha256=" + digest(headers["x-service-timestamp"] + ".").hex()
standard = "v1," + base64.b64encode(digest(headers["webhook-id"] + "." + headers["webhook-timestamp"] + ".")).decode()
print(json.dumps({
    "serviceSignature": any_matches(service, headers["x-service-signature"]),
    "webhookSignature": any_matches(standard, headers["webhook-signature"]),
}))
