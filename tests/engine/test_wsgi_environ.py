"""engine/speedups/wsgi_environ.py: the environ of a plain POST to `/` is the one werkzeug's
EnvironBuilder makes, key by key; any other request is left to the builder (None)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from botocore.awsrequest import AWSRequest
from werkzeug.test import EnvironBuilder

from onceflow.engine.speedups import direct_transport
from onceflow.engine.speedups.wsgi_environ import root_environ

JSON = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.GetItem"}
BUILT: list[tuple[str, Any, Any]] = [
    ("http://127.0.0.1:4747/", b'{"TableName": "t"}', JSON),  # the embedded endpoint: a port
    ("http://localhost:80/", b"{}", JSON),  # a default port written out stays in the Host
    ("https://dynamodb.us-east-1.amazonaws.com/", b"{}", JSON),  # no port: the scheme's
    ("http://sqs.us-east-1.amazonaws.com/", "{}", JSON),  # a str body
    (  # a form body (query protocol), bytes header values, a length header that is the body's
        "http://127.0.0.1:4747/",
        b"Action=Publish&Message=x",
        {"Content-Type": b"application/x-www-form-urlencoded; charset=utf-8", "Content-Length": "24"},
    ),
    (  # one header twice in two spellings: joined as werkzeug joins them
        "http://127.0.0.1:4747/",
        b"{}",
        [("Content-Type", "application/json"), ("X-Amz-Meta", "a"), ("x-amz-meta", "b"), ("User-Agent", "ua/1")],
    ),
]
LEFT_TO_THE_BUILDER: list[tuple[str, Any, Any]] = [
    ("http://127.0.0.1:4747/path", b"{}", JSON),
    ("http://127.0.0.1:4747/?Action=ListQueues", b"{}", JSON),
    ("http://LOCALHOST:4747/", b"{}", JSON),  # the builder lowers the host's case
    ("http://[::1]:4747/", b"{}", JSON),
    ("http://127.0.0.1:4747/", b"", JSON),
    ("http://127.0.0.1:4747/", None, JSON),
    ("ftp://127.0.0.1/", b"{}", JSON),
    ("http://127.0.0.1:4747/", b"{}", {**JSON, "Transfer-Encoding": "chunked"}),
    ("http://127.0.0.1:4747/", b"{}", {**JSON, "X-Bad": "a\nb"}),
]


def _items(headers: Any) -> list[tuple[str, Any]]:
    return list(headers.items()) if isinstance(headers, dict) else list(headers)


def _builder_environ(url: str, body: Any, headers: Any) -> dict[str, Any]:
    parts = urlsplit(url)
    builder = EnvironBuilder(
        path=parts.path,
        base_url=f"{parts.scheme}://{parts.netloc}",
        query_string=parts.query,
        method="POST",
        headers=[(k, v.decode() if isinstance(v, bytes) else v) for k, v in _items(headers)],
        data=body,
    )
    try:
        return builder.get_environ()
    finally:
        builder.close()


def _comparable(environ: dict[str, Any]) -> dict[str, Any]:
    comparable = {k: v for k, v in environ.items() if k != "wsgi.input"}
    comparable["wsgi.input"] = environ["wsgi.input"].read()
    return comparable


@pytest.mark.parametrize(("url", "body", "headers"), BUILT)
def test_a_plain_post_to_the_root_gets_the_builders_environ_key_by_key(url: str, body: Any, headers: Any) -> None:
    mine = root_environ("POST", url, _items(headers), body)
    assert mine is not None
    theirs = _builder_environ(url, body, headers)
    assert list(mine) == list(theirs)  # the same keys in the same order
    assert _comparable(mine) == _comparable(theirs)


@pytest.mark.parametrize(("url", "body", "headers"), LEFT_TO_THE_BUILDER)
def test_any_other_request_is_left_to_the_builder(url: str, body: Any, headers: Any) -> None:
    assert root_environ("POST", url, _items(headers), body) is None


@pytest.mark.parametrize("url", ["http://127.0.0.1:4747/", "http://127.0.0.1:4747/some/key?uploads"])
def test_the_direct_transport_hands_over_the_builders_environ_whichever_way_it_is_built(url: str) -> None:
    request = AWSRequest(method="POST", url=url, data=b'{"QueueName": "q"}', headers=JSON).prepare()
    mine = direct_transport.environ_of(request)
    theirs = _builder_environ(url, b'{"QueueName": "q"}', JSON)
    assert _comparable(mine) == _comparable(theirs)
