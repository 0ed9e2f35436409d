"""HTTP basic, digest and OAuth2 authentication against servers on
127.0.0.1 that check the credentials as the services do (AdGuard Home's
basic, a Shelly's digest with SHA-256 or MD5, a bearer token); the password
or token never in any text."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.auth import SignInUnavailable
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
        ({"type": "oauth2"}, "auth.sign_in", "is required"),
        ({"type": "oauth2", "sign_in": "my account"}, "auth.sign_in", "1-64 letters"),
        (
            {"type": "oauth2", "sign_in": "s", "password": "{secret:pw}"},
            "auth.password",
            "has no place",
        ),
        (
            {"type": "basic", "username": "u", "password": "p", "sign_in": "s"},
            "auth.sign_in",
            'belongs to "type": "oauth2"',
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


TOKEN = "ya29.a0AfB_token-of-the-sign-in"


async def test_oauth2_sends_the_sign_ins_token(
    service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """The token the caller gives for the sign-in named, as a bearer token
    (over an Authorization header the tool wrote); a server that echoes it
    never hands it to the model."""
    service.route("/status", body=b"", bearer=TOKEN)
    (definition,) = parse_tools(
        [
            {
                "name": "t",
                "url": service.url + "/status",
                "method": "GET",
                "headers": {"Authorization": "Bearer stale"},
                "auth": {"type": "oauth2", "sign_in": "google"},
            }
        ]
    )
    asked: list[str] = []

    async def token(name: str) -> str:
        asked.append(name)
        return TOKEN

    await run_tool(session, definition, {}, tokens=token)
    assert service.arrived[0].headers["Authorization"] == f"Bearer {TOKEN}"
    service.route("/status", body=f"you sent Bearer {TOKEN}".encode(), bearer=TOKEN)

    result = await run_tool(session, definition, {}, tokens=token)

    assert result.text == "you sent ***"
    assert asked == ["google", "google"]
    assert definition.as_dict()["auth"] == {"type": "oauth2", "sign_in": "google"}


@pytest.mark.parametrize(
    ("sign_in_again", "outcome"),
    [(True, Outcome.SIGNED_OUT), (False, Outcome.UNREACHABLE)],
)
async def test_no_token_sends_nothing(
    service: ServiceServer,
    session: aiohttp.ClientSession,
    sign_in_again: bool,
    outcome: Outcome,
) -> None:
    """Without a token the request is not sent: the model reads what the
    token source said, the outcome says whether the user must sign in."""
    service.route("/status", body=b"{}")
    (definition,) = parse_tools(
        [
            {
                "name": "t",
                "url": service.url + "/status",
                "method": "GET",
                "auth": {"type": "oauth2", "sign_in": "google"},
            }
        ]
    )

    async def token(name: str) -> str:
        raise SignInUnavailable(
            f"Error: no token for {name}", "no token", sign_in_again=sign_in_again
        )

    result = await run_tool(session, definition, {}, tokens=token)
    alone = await run_tool(session, definition, {})

    assert (result.outcome, result.text) == (outcome, "Error: no token for google")
    assert (alone.outcome, alone.text) == (
        Outcome.SIGNED_OUT,
        "Error: tool 't' needs the sign-in 'google', which is not set up",
    )
    assert service.arrived == []
