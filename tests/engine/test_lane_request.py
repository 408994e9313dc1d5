"""json_lane's request and answer (engine/speedups/json_lane.py), each compared with werkzeug's.

moto builds every request's URL from its root (raw_url); werkzeug derives it from the scheme, host,
server and script name, through IRI decoding, on every request. The root must be the one werkzeug
gives for every such combination, and a second request to the same endpoint must not work it out
again. A JSON body is read as werkzeug reads it (the stream, no form) without werkzeug's form parser;
a form still goes through it. The lane's answer is the status line, headers and body werkzeug's
Response gives, for what moto's JSON services answer, and werkzeug's own for anything else.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from flask import Response
from moto.core.request import Request
from werkzeug.sansio import utils as werkzeug_utils
from werkzeug.test import EnvironBuilder

from onceflow.engine.speedups import json_lane


@pytest.mark.parametrize(
    ("base_url", "script_name"),
    [
        ("http://127.0.0.1:4566", ""),
        ("http://localhost:80", ""),
        ("https://example.com:443", "/app"),
        ("http://xn--bcher-kva.example:8080", ""),  # an IDNA host, decoded to its IRI form by werkzeug
    ],
)
def test_the_lane_requests_url_root_is_werkzeugs(base_url: str, script_name: str) -> None:
    environ = EnvironBuilder(path="/", base_url=base_url + script_name, method="POST").get_environ()
    assert json_lane.LaneRequest(environ).url_root == Request(environ).url_root


def test_a_second_request_to_the_same_endpoint_does_not_work_the_root_out_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    worked_out: list[str] = []
    current_url = werkzeug_utils.get_current_url

    def counted(*args: object, **kwargs: object) -> str:
        worked_out.append("root")
        return current_url(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("werkzeug.sansio.request.get_current_url", counted)
    monkeypatch.setattr(json_lane, "_URL_ROOTS", {})
    environ = EnvironBuilder(path="/", base_url="http://127.0.0.1:4747", method="POST").get_environ()
    roots = [json_lane.LaneRequest(dict(environ)).url_root for _ in range(3)]
    assert roots == ["http://127.0.0.1:4747/"] * 3
    assert worked_out == ["root"]


def _werkzeugs(
    status: int, headers: dict[str, object], content: str | bytes
) -> tuple[str, list[tuple[str, str]], bytes]:
    """What the lane answered before: werkzeug's Response with flask_cors's header, as WSGI hands it on."""
    response = Response(response=content, status=status, headers=headers)
    response.headers.add(*json_lane.CORS_HEADER)
    return _called(response)


def _called(app: json_lane.WsgiAnswer) -> tuple[str, list[tuple[str, str]], bytes]:
    started: list[object] = []
    body = b"".join(app(EnvironBuilder(path="/", method="POST").get_environ(), lambda *a: started.extend(a[:2])))
    status, headers = started
    return status, headers, body  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("status", "headers", "content"),
    [
        (200, {"Content-Type": "application/x-amz-json-1.0", "server": "amazon.com", "x-amzn-requestid": "r"}, "{}"),
        (400, {"Content-Type": "application/x-amz-json-1.1", "x-amzn-ErrorType": "ResourceNotFound"}, b'{"m": 1}'),
        (200, {"content-type": "application/json", "x-amz-crc32": 123}, '{"é": "ü"}'),  # an int, non-ASCII
        (599, {"Content-Type": "text/plain"}, ""),  # a code werkzeug does not name
    ],
)
def test_a_plain_answer_is_the_one_werkzeug_gives(
    status: int, headers: dict[str, object], content: str | bytes
) -> None:
    plain = json_lane.plain_answer(status, dict(headers), content)
    assert plain is not None
    assert _called(plain) == _werkzeugs(status, headers, content)


@pytest.mark.parametrize(
    ("status", "headers", "content"),
    [
        (204, {"Content-Type": "application/json"}, ""),  # werkzeug drops Content-Length
        (304, {"Content-Type": "application/json"}, ""),
        (200, {"server": "amazon.com"}, "{}"),  # werkzeug adds its default Content-Type
        (302, {"Content-Type": "application/json", "Location": "/x"}, ""),  # werkzeug makes it absolute
        (200, {"Content-Type": "application/json", "Content-Length": "2"}, "{}"),
        (200, {"Content-Type": "application/json", "x-list": ["a", "b"]}, "{}"),  # werkzeug repeats the header
        (200, {"Content-Type": "application/json", "x-bad": "a\r\nb"}, "{}"),  # werkzeug refuses it
        ("200 OK", {"Content-Type": "application/json"}, "{}"),
        (200, {"Content-Type": "application/json"}, ["{}"]),
    ],
)
def test_anything_else_is_left_to_werkzeug(status: object, headers: dict[str, object], content: object) -> None:
    assert json_lane.plain_answer(status, headers, content) is None


def _posted(content_type: str, body: bytes) -> dict[str, object]:
    return EnvironBuilder(path="/", method="POST", data=body, content_type=content_type).get_environ()


def test_a_json_body_is_read_as_werkzeug_reads_it_without_its_form_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    body = b'{"executionArn": "arn:aws:states:us-east-1:1:execution:m:e", "a": "b=c&d"}'
    moto_request = Request(_posted("application/x-amz-json-1.0", body))
    werkzeugs = (moto_request.data, moto_request.form, moto_request.files)
    parsers: list[str] = []
    monkeypatch.setattr(Request, "make_form_data_parser", lambda self: parsers.append("parser") or None)
    lane_request = json_lane.LaneRequest(_posted("application/x-amz-json-1.0", body))
    assert (lane_request.data, lane_request.form, lane_request.files) == (body, {}, {})
    assert (lane_request.data, lane_request.form, lane_request.files) == werkzeugs
    assert type(lane_request.form) is type(moto_request.form)
    assert parsers == []


def test_a_json_body_in_memory_is_read_without_a_stream_and_an_encoded_one_through_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lanes hold a request's body in memory: `data` is those bytes, read without werkzeug's stream
    wrapper; a gzip-encoded body is left to the stream, through which moto decompresses it."""
    body = b'{"TableName": "t"}'
    werkzeugs = Request(_posted("application/x-amz-json-1.0", body)).data
    streams: list[str] = []
    wrap = Request._get_stream_for_parsing
    monkeypatch.setattr(Request, "_get_stream_for_parsing", lambda self: streams.append("stream") or wrap(self))
    lane_request = json_lane.LaneRequest(_posted("application/x-amz-json-1.0", body))
    assert (lane_request.data, lane_request.form, lane_request.files) == (body, {}, {})
    assert streams == []
    encoded = _posted("application/x-amz-json-1.0", body)
    encoded["HTTP_CONTENT_ENCODING"] = "gzip"
    assert json_lane._json_body(encoded) is None
    assert json_lane.LaneRequest(encoded).data == werkzeugs
    assert streams == ["stream"]


def test_a_form_body_is_still_parsed_by_werkzeug() -> None:
    lane_request = json_lane.LaneRequest(_posted("application/x-www-form-urlencoded", b"Action=SendMessage&a=1"))
    assert lane_request.form.to_dict() == {"Action": "SendMessage", "a": "1"}


def test_a_lane_request_is_freed_with_its_environ_without_the_cyclic_collector() -> None:
    """werkzeug puts a request in its environ (`werkzeug.request`) by default: the two then hold each
    other, with all they hold, until the cyclic collector's next pass. Nothing on the lane reads it."""
    environ = EnvironBuilder(path="/", method="POST", data=b"{}", content_type="application/json").get_environ()
    request = json_lane.LaneRequest(environ)
    assert request.data == b"{}" and "werkzeug.request" not in environ
    assert "werkzeug.request" in Request(EnvironBuilder(path="/").get_environ()).environ  # werkzeug's default
    freed = weakref.ref(request)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del request, environ
        assert freed() is None
    finally:
        if was_enabled:
            gc.enable()
