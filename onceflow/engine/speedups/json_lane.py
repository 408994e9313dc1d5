"""The `json_lane` speed-up: a JSON-protocol request reaches moto's response class without Flask.

moto's server hands every request to a Flask application per service, whose one view for `/`
(`convert_to_flask_response`) calls the service's `dispatch` with the request; around it Flask pushes
a request and an application context, looks the view up in its URL map, runs flask_cors's
`after_request` and pops the contexts: about a quarter of the server's CPU for a DescribeExecution
from another process (`trace` makes one per execution whose history is gone). Here a request that
Flask would hand to that view does the view's own steps (moto's request class, its recorder, the
ClientError answer, Flask's response class) and gets the one header flask_cors adds to a request
without `Origin` (`Access-Control-Allow-Origin: *`): the same status, headers and body. The usual
answer of moto's JSON services (an int status, a dict of plain headers with a Content-Type, a text
body) is handed to WSGI as werkzeug's response would hand it, without building one (plain_answer:
about 8 % of a DescribeExecution); a JSON body is read without werkzeug's form parser (LaneRequest).

The lane takes only what it can answer so: a signed (SigV4) POST to `/` naming an `X-Amz-Target`,
without `Origin` or any other header flask_cors reads, for a service whose application routes `/` to
moto's view and registers nothing but flask_cors's `after_request`. Anything else, and any request
when switched off, goes through moto's DomainDispatcherApplication and Flask as before.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError
from flask import Flask, Response
from moto.core.request import Request
from moto.core.utils import convert_to_flask_response
from moto.moto_api import recorder
from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from werkzeug.exceptions import HTTPException
from werkzeug.http import HTTP_STATUS_CODES

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import JSON_LANE

Patch = tuple[Any, str, Any]
SPEEDUPS = (JSON_LANE,)
CORS_HEADER = ("Access-Control-Allow-Origin", "*")  # flask_cors's answer to a request without Origin
_CORS_REQUEST_HEADERS = ("HTTP_ORIGIN", "HTTP_ACCESS_CONTROL_REQUEST_PRIVATE_NETWORK")


def moto_needs() -> list[Need]:
    return [
        need(DomainDispatcherApplication, "__call__", "environ", "start_response"),
        need(DomainDispatcherApplication, "get_application", "environ"),
        need(convert_to_flask_response, "__call__"),
        need(convert_to_flask_response, "__init__", "callback"),
        need(Request, "raw_url"),
        need(Request, "from_wsgi_server"),
        need(recorder, "_record_request"),
    ]


class LaneRequest(Request):
    """moto's request, as its server's Flask request class (BackendRequest) marks it; its URL root
    (werkzeug's, from the scheme, host and script name, IRI-decoded) worked out once per endpoint:
    moto reads it for every request (raw_url), about 8 % of the server's CPU for a DescribeExecution.
    A body that is not a form (a JSON one) is left unparsed without building werkzeug's form parser,
    which answers such a body with the stream and two empty dicts (about 4 % of a DescribeExecution)."""

    from_wsgi_server = True

    def __init__(self, environ: dict[str, Any], populate_request: bool = False, shallow: bool = False):
        # Not put in its environ as `werkzeug.request` (werkzeug's default): nothing on the lane reads
        # it there, and a request and its environ holding each other wait, with all they hold, for the
        # cyclic collector (Flask, which the lane leaves out, clears it after each request itself).
        super().__init__(environ, populate_request=populate_request, shallow=shallow)
        body = _json_body(environ)
        if body is not None:  # what get_data and _load_form_data would read, read once
            self._cached_data = body
            self.__dict__.update(form=self.parameter_storage_class(), files=self.parameter_storage_class())

    def _load_form_data(self) -> None:
        if "form" in self.__dict__ or not self.want_form_data_parsed or self.mimetype in _FORM_TYPES:
            return super()._load_form_data()
        self.__dict__.update(
            stream=self._get_stream_for_parsing(),
            form=self.parameter_storage_class(),
            files=self.parameter_storage_class(),
        )

    @property
    def url_root(self) -> str:
        environ = self.environ
        key = tuple(environ.get(name) for name in _URL_ROOT_FROM)
        root = _URL_ROOTS.get(key)
        if root is None:
            root = _URL_ROOTS[key] = Request.url_root.__get__(self)  # type: ignore[attr-defined]
        return root


def _json_body(environ: dict[str, Any]) -> bytes | None:
    """The whole body of a JSON request whose input is in memory (the lanes read or build it so:
    keep_alive.py, wsgi_environ.py, batch_requests.py) and not encoded, or None. Such a body is no
    form: werkzeug answers `form` and `files` empty and `data` with these bytes, through its stream
    wrappers and the content type's parse (about 2 % of a pipeline execution's instructions)."""
    stream = environ.get("wsgi.input")
    if (
        type(stream) is not io.BytesIO
        or not environ.get("CONTENT_TYPE", "").startswith(_JSON_TYPES)
        or "HTTP_CONTENT_ENCODING" in environ  # moto decompresses a gzip body through the stream
    ):
        return None
    body = stream.getvalue()
    return body if stream.tell() == 0 and environ.get("CONTENT_LENGTH") == str(len(body)) else None


_JSON_TYPES = ("application/x-amz-json-", "application/json")
# What werkzeug's url_root is made of (Request.host with no trusted_hosts, then root_url).
_URL_ROOT_FROM = ("wsgi.url_scheme", "HTTP_HOST", "SERVER_NAME", "SERVER_PORT", "SCRIPT_NAME")
_URL_ROOTS: dict[tuple[Any, ...], str] = {}
_FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")  # what werkzeug's parser parses


def patches() -> list[Patch]:
    moto_call = DomainDispatcherApplication.__call__
    # id(app) -> (the app, kept so that its id is not reused; its service's dispatch, or None)
    views: dict[int, tuple[Flask, Callable[..., Any] | None]] = {}

    def dispatch_with_lane(self: DomainDispatcherApplication, environ: dict[str, Any], start_response: Any) -> Any:
        if not takes(environ):
            return moto_call(self, environ, start_response)
        app = self.get_application(environ)
        known = views.get(id(app))
        if known is None or known[0] is not app:
            known = views[id(app)] = (app, dispatch_of(app))
        dispatch = known[1]
        if dispatch is None:
            return app(environ, start_response)
        return answer(dispatch, environ)(environ, start_response)

    dispatch_with_lane.moto_call = moto_call  # type: ignore[attr-defined]  # the tests compare both
    return [(DomainDispatcherApplication, "__call__", dispatch_with_lane)]


def takes(environ: dict[str, Any]) -> bool:
    return (
        environ.get("REQUEST_METHOD") == "POST"
        and environ.get("PATH_INFO") == "/"
        and not environ.get("QUERY_STRING")
        and "HTTP_X_AMZ_TARGET" in environ
        and str(environ.get("HTTP_AUTHORIZATION", "")).startswith("AWS4-HMAC-SHA256 ")
        and not any(name in environ for name in _CORS_REQUEST_HEADERS)
    )


def dispatch_of(app: Flask) -> Callable[..., Any] | None:
    """The callback moto's view for `POST /` calls, when that view is all Flask would run."""
    try:
        endpoint, arguments = app.url_map.bind("localhost").match("/", method="POST")
    except Exception:  # werkzeug's routing answers a miss with an HTTP exception
        return None
    view = app.view_functions.get(endpoint)
    after = app.after_request_funcs
    if (
        arguments
        or not isinstance(view, convert_to_flask_response)
        or set(after) != {None}
        or [f.__qualname__ for f in after[None]] != ["make_after_request_function.<locals>.cors_after_request"]
        or any(
            app_hooks
            for app_hooks in (app.before_request_funcs, app.teardown_request_funcs, app.url_value_preprocessors)
        )
    ):
        return None
    return view.callback


def answer(dispatch: Callable[..., Any], environ: dict[str, Any]) -> WsgiAnswer:
    """What convert_to_flask_response returns for this request, or Flask for the HTTP exception it
    raises (moto's service errors are werkzeug HTTPExceptions), with flask_cors's header."""
    request = LaneRequest(environ)
    try:
        try:
            recorder._record_request(request)
            result = dispatch(request, request.raw_url, dict(request.headers))
        except ClientError as exc:
            result = 400, {}, exc.response["Error"]["Message"]
    except HTTPException as error:  # Flask's make_response of an exception: the WSGI answer it makes
        response = Response.force_type(error, environ)  # type: ignore[arg-type]
    else:
        status, headers, content = result if len(result) == 3 else (200, {}, result)
        plain = plain_answer(status, headers, content)
        if plain is not None:
            return plain
        response = Response(response=content, status=status, headers=headers)
    response.headers.add(*CORS_HEADER)
    return response


WsgiAnswer = Callable[[dict[str, Any], Callable[..., Any]], Any]
# Headers werkzeug's response rewrites on the way out (made absolute, recomputed): left to it.
_REWRITTEN = frozenset({"location", "content-location", "content-length"})


def plain_answer(status: Any, headers: Any, content: Any) -> WsgiAnswer | None:
    """The WSGI answer werkzeug's Response(content, status, headers) gives with flask_cors's header,
    built without it, for the answers moto's JSON services give: an int status with a body
    (not 1xx, 204 or 304), a dict of str or int header values naming the Content-Type and none of
    those werkzeug rewrites, a str or bytes body. Anything else: None (werkzeug builds it)."""
    if (
        type(status) is not int
        or not 200 <= status < 600
        or status in (204, 304)
        or not isinstance(content, (str, bytes))
        or type(headers) is not dict
    ):
        return None
    listed: list[tuple[str, str]] = []
    typed = False
    for name, value in headers.items():
        if not isinstance(name, str) or type(value) not in (str, int):
            return None
        text = str(value)
        lowered = name.lower()
        if lowered in _REWRITTEN or "\n" in text or "\r" in text:
            return None
        typed = typed or lowered == "content-type"
        listed.append((name, text))
    if not typed:
        return None
    body = content.encode() if isinstance(content, str) else content
    listed += [("Content-Length", str(len(body))), CORS_HEADER]  # werkzeug sets the length with the body
    line = f"{status} {HTTP_STATUS_CODES.get(status, 'unknown').upper()}"

    def respond(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        start_response(line, listed)
        return [body]

    return respond
