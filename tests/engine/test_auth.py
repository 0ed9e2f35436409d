"""HTTP basic and digest authentication against servers on 127.0.0.1 that
check the credentials as the services do (AdGuard Home's basic, a Shelly's
digest with SHA-256 or MD5); the password never in any text."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    ToolDefinitionError,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import Outcome, run_tool
from tests.service_cases import ServiceServer

PASSWORD = "s3cr€t:pw"
SECRETS = {"pw": PASSWORD}


def tool(service: ServiceServer, auth: dict[str, Any]) -> ToolDefinition:
    """A GET of `/status` with `auth`."""
    (definition,) = parse_tools(
        [{"name": "t", "url": service.url + "/status", "method": "GET", "auth": auth}]
    )
    return definition


async def test_basic(service: ServiceServer, session: aiohttp.ClientSession) -> None:
    """The header a basic server accepts (UTF-8 password); nothing shows it."""
    service.route("/status", body=b'{"running":true}', basic=("admin", PASSWORD))
    definition = tool(
        service, {"type": "basic", "username": "admin", "password": "{secret:pw}"}
    )

    result = await run_tool(session, definition, {}, secrets=SECRETS)

    assert (result.outcome, result.text) == (Outcome.DONE, '{"running":true}')
    assert service.arrived[0].headers["Authorization"].startswith("Basic ")


@pytest.mark.parametrize("algorithm", ["SHA-256", "MD5"])
async def test_digest(
    service: ServiceServer, session: aiohttp.ClientSession, algorithm: str
) -> None:
    """The challenge answered (aiohttp's digest middleware): the request is
    sent again with the response the server computes."""
    service.route(
        "/status",
        body=b'{"output":true}',
        digest=("admin", PASSWORD),
        digest_algorithm=algorithm,
    )
    definition = tool(
        service, {"type": "digest", "username": "admin", "password": "{secret:pw}"}
    )

    result = await run_tool(session, definition, {}, secrets=SECRETS)

    assert (result.outcome, result.text) == (Outcome.DONE, '{"output":true}')
    first, second = service.arrived
    assert "Authorization" not in first.headers
    assert second.headers["Authorization"].startswith("Digest ")


async def test_wrong_password_is_a_401_without_the_password(
    service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """Refused credentials: the model reads the status; no text holds the
    password, even when the server echoes it."""
    service.route(
        "/status",
        body=f"bad password {PASSWORD}".encode(),
        digest=("admin", "other"),
    )
    definition = tool(
        service, {"type": "digest", "username": "admin", "password": "{secret:pw}"}
    )

    result = await run_tool(session, definition, {}, secrets=SECRETS)

    assert result.outcome is Outcome.HTTP_ERROR
    assert result.status == 401
    assert PASSWORD not in result.text


async def test_echoed_credentials_are_hidden(
    service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """A server that echoes the request (httpbin...) never hands the model
    the basic header or the password."""
    service.route("/status", body=b"")
    definition = tool(
        service, {"type": "basic", "username": "admin", "password": "{secret:pw}"}
    )
    await run_tool(session, definition, {}, secrets=SECRETS)
    header = service.arrived[0].headers["Authorization"]
    service.route("/status", body=f"you sent {header} ({PASSWORD})".encode())

    result = await run_tool(session, definition, {}, secrets=SECRETS)

    assert result.text == "you sent *** (***)"


@pytest.mark.parametrize(
    ("auth", "field", "message"),
    [
        (
            {"type": "bearer", "username": "u", "password": "p"},
            "auth.type",
            "must be one of",
        ),
        (
            {"type": "basic", "username": "{user}", "password": "p"},
            "auth.username",
            "takes fixed text and {secret:name} only",
        ),
        ({"type": "basic", "username": "a:b", "password": "p"}, "auth.username", "':'"),
        (
            {"type": "basic", "username": "u", "password": "p", "realm": "x"},
            "auth.realm",
            "unknown",
        ),
    ],
)
def test_bad_auth_names_its_field(
    auth: dict[str, Any], field: str, message: str
) -> None:
    """The model never chooses credentials; every mistake names its field."""
    raw = {
        "name": "t",
        "url": "http://h/x",
        "parameters": {"type": "object", "properties": {"user": {"type": "string"}}},
        "auth": auth,
    }

    with pytest.raises(ToolDefinitionError) as caught:
        parse_tools([raw])

    assert any(
        p.field == field and message in p.message for p in caught.value.problems
    ), caught.value.problems
