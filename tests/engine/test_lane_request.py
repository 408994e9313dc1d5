"""json_lane's request works out werkzeug's URL root once per endpoint (engine/speedups/json_lane.py).

moto builds every request's URL from it (raw_url); werkzeug derives it from the scheme, host, server
and script name, through IRI decoding, on every request. The root must be the one werkzeug gives for
every such combination, and a second request to the same endpoint must not work it out again.
"""

from __future__ import annotations

import pytest
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
