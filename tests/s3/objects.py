#!/usr/bin/env python3
"""objects.py: lists, shortens and removes objects of the test S3 server.

For tests that damage a table on S3 behind brid's back, and check that an
operation changed nothing (the listing with sizes and ETags before and
after). Endpoint, credentials and bucket from the environment that
scripts/s3-server.sh exports (AWS_*, BRI_S3_BUCKET).

    objects.py ls URI          one line per object below URI: key size etag
    objects.py truncate URI N  rewrites the object at URI with its first N bytes
    objects.py rm URI          deletes the object at URI
"""
import os
import sys

import boto3


def split(uri):
    assert uri.startswith("s3://"), uri
    bucket, _, key = uri[5:].partition("/")
    return bucket, key


def main(argv):
    s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                      region_name=os.environ.get("AWS_REGION", "us-east-1"))
    op, uri = argv[1], argv[2]
    bucket, key = split(uri)
    if op == "ls":
        prefix = key.rstrip("/") + "/"
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for o in page.get("Contents", []):
                print(o["Key"], o["Size"], o["ETag"])
    elif op == "truncate":
        n = int(argv[3])
        body = s3.get_object(Bucket=bucket, Key=key, Range="bytes=0-%d" % (n - 1))["Body"].read() if n else b""
        s3.put_object(Bucket=bucket, Key=key, Body=body[:n])
    elif op == "rm":
        s3.delete_object(Bucket=bucket, Key=key)
    else:
        sys.exit("usage: objects.py ls|truncate|rm URI [N]")


if __name__ == "__main__":
    main(sys.argv)
