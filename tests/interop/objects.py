# objects.py: the objects of a table on the test object stores, one "KEY SIZE" line
# each, KEY relative to the table (data/x.lance 1234), for the tests and benchmarks that
# count what a compaction wrote.
#
#   python3 tests/interop/objects.py s3://BUCKET/PREFIX/T.lance    (radosgw: AWS_* as
#                                     scripts/s3-server.sh prints them; Debian's boto3)
#   python3 tests/interop/objects.py az://CONTAINER/PREFIX/T.lance (Azurite: AZURE_STORAGE_*
#                                     as scripts/azurite-server.sh prints them; List Blobs
#                                     signed with the account's Shared Key, the standard
#                                     library only)
import base64
import datetime
import hashlib
import hmac
import os
import sys
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET


def s3_objects(bucket, prefix):
    import boto3
    e = os.environ
    s3 = boto3.client("s3", endpoint_url=e["AWS_ENDPOINT_URL"], region_name=e.get("AWS_REGION", "us-east-1"))
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            yield o["Key"], o["Size"]


def az_objects(container, prefix):
    e = os.environ
    account, key = e["AZURE_STORAGE_ACCOUNT_NAME"], base64.b64decode(e["AZURE_STORAGE_ACCOUNT_KEY"])
    endpoint = e["AZURE_STORAGE_ENDPOINT"].rstrip("/")  # http://HOST:PORT/ACCOUNT (path-style, Azurite)
    marker = ""
    while True:
        query = {"comp": "list", "prefix": prefix, "restype": "container"}
        if marker:
            query["marker"] = marker
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
        resource = f"/{account}{urllib.parse.urlparse(endpoint).path}/{container}" + "".join(
            f"\n{k}:{v}" for k, v in sorted(query.items()))
        sts = "GET\n" + "\n" * 11 + f"x-ms-date:{date}\nx-ms-version:2021-08-06\n" + resource
        sig = base64.b64encode(hmac.new(key, sts.encode(), hashlib.sha256).digest()).decode()
        req = urllib.request.Request(f"{endpoint}/{container}?{urllib.parse.urlencode(query)}", headers={
            "x-ms-date": date, "x-ms-version": "2021-08-06", "Authorization": f"SharedKey {account}:{sig}"})
        root = ET.fromstring(urllib.request.urlopen(req, timeout=30).read())
        for b in root.iter("Blob"):
            yield b.findtext("Name"), int(b.findtext("Properties/Content-Length"))
        marker = root.findtext("NextMarker") or ""
        if not marker:
            return


def main(uri):
    scheme, _, rest = uri.partition("://")
    where, _, table = rest.partition("/")
    prefix = table.rstrip("/") + "/"
    listing = {"s3": s3_objects, "az": az_objects}.get(scheme)
    if not listing:
        sys.exit(f"objects.py: {uri}: an s3:// or az:// table")
    for k, size in listing(where, prefix):
        print(k[len(prefix):], size)


if __name__ == "__main__":
    main(sys.argv[1])
