"""Sign-ins: a tool whose `auth` is `{"type": "oauth2", "sign_in": name}`
sends the access token of a sign-in made through Home Assistant's OAuth2
flow, with the client id and secret of an application credential.

Everything real: Home Assistant's flow, its `/auth/external/callback` view
and `OAuth2Session`; a provider on 127.0.0.1 that is the authorization
server and the API (it answers only the access token in force). The
user's browser is an aiohttp client that follows the provider's redirect
back to Home Assistant.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
import json
import logging
import time
from typing import Any

import aiohttp
from homeassistant import config_entries
from homeassistant.components.application_credentials import (
    ClientCredential,
    async_import_client_credential,
)
from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import ServiceValidationError
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.typing import (
    ClientSessionGenerator,
    WebSocketGenerator,
)
from yarl import URL

from custom_components.http_tools_agent.const import (
    CONF_AUTHORIZE_URL,
    CONF_SCOPES,
    CONF_SIGN_IN,
    CONF_TOKEN_URL,
    DOMAIN,
)
from custom_components.http_tools_agent.diagnostics import (
    async_get_config_entry_diagnostics,
)

from .kit import agent_with_tools, call_service, converse, speech
from .oauth import CLIENT_ID, CLIENT_SECRET, OAuthProvider
from .servers import FakeLLMServer, text_stream, tool_calls_stream

REDIRECT_URI = "https://example.com/auth/external/callback"
SCOPES = "user-modify-playback-state user-read-playback-state"


@pytest.fixture
async def provider(socket_enabled: None) -> AsyncGenerator[OAuthProvider]:
    """The service: its authorization server and its API."""
    async with OAuthProvider() as server:
        yield server


def oauth_tools(provider: OAuthProvider) -> list[dict[str, Any]]:
    """Spotify's "next song" and Google Calendar's "what's on tomorrow", at
    the provider."""
    return [
        {
            "name": "next_song",
            "description": "Skip to the next song.",
            "url": f"{provider.url}/v1/me/player/next",
            "method": "POST",
            "auth": {"type": "oauth2", "sign_in": "spotify"},
        },
        {
            "name": "tomorrow",
            "description": "What's on the calendar tomorrow.",
            "url": f"{provider.url}/calendar/v3/calendars/primary/events"
            "?timeMin=2026-12-04T00:00:00Z&timeMax=2026-12-05T00:00:00Z"
            "&singleEvents=true&orderBy=startTime",
            "method": "GET",
            "auth": {"type": "oauth2", "sign_in": "spotify"},
            "response": {"path": "items", "fields": ["summary", "start.dateTime"]},
        },
    ]


@pytest.fixture
async def server_entry(
    hass: HomeAssistant, llm_server: FakeLLMServer, provider: OAuthProvider
) -> ConfigEntry:
    """A server whose agent has the two tools, and an application credential."""
    entry: ConfigEntry = await agent_with_tools(
        hass, llm_server.base_url, oauth_tools(provider)
    )
    assert await async_setup_component(hass, "auth", {})
    assert await async_setup_component(hass, "application_credentials", {})
    await async_import_client_credential(
        hass,
        DOMAIN,
        ClientCredential(CLIENT_ID, CLIENT_SECRET, "Spotify app"),
        "spotify_app",
    )
    return entry


async def go_to_provider(
    hass: HomeAssistant,
    result: config_entries.ConfigFlowResult,
    hass_client_no_auth: ClientSessionGenerator,
) -> config_entries.ConfigFlowResult:
    """The user's browser at the service, allowing access, and back at Home
    Assistant's callback; the flow's next result."""
    assert result["type"] is FlowResultType.EXTERNAL_STEP
    async with (
        aiohttp.ClientSession() as browser,
        browser.get(result["url"], allow_redirects=False) as answer,
    ):
        assert answer.status == 302
        back = URL(answer.headers["Location"])
    assert str(back.with_query(None)) == REDIRECT_URI
    client = await hass_client_no_auth()
    answer = await client.get(back.path_qs)
    assert answer.status == 200
    return await hass.config_entries.flow.async_configure(result["flow_id"])


async def sign_in(
    hass: HomeAssistant,
    provider: OAuthProvider,
    hass_client_no_auth: ClientSessionGenerator,
) -> ConfigEntry:
    """Add the sign-in `spotify` as a user does; its entry."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    # With an application credential, Add entry asks what to add.
    assert result["type"] is FlowResultType.MENU
    assert result["menu_options"] == ["server", "sign_in"]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "sign_in"}
    )
    assert result["step_id"] == "sign_in"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {
            CONF_SIGN_IN: "spotify",
            CONF_AUTHORIZE_URL: f"{provider.url}/authorize",
            CONF_TOKEN_URL: f"{provider.url}/token",
            CONF_SCOPES: SCOPES,
        },
    )
    # The one credential is picked; the user goes to the service.
    assert result["type"] is FlowResultType.EXTERNAL_STEP
    asked = URL(result["url"])
    assert asked.with_query(None) == URL(f"{provider.url}/authorize")
    assert asked.query["client_id"] == CLIENT_ID
    assert asked.query["scope"] == SCOPES
    assert asked.query["redirect_uri"] == REDIRECT_URI
    result = await go_to_provider(hass, result, hass_client_no_auth)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "spotify"
    await hass.async_block_till_done()
    entry = hass.config_entries.async_get_entry(result["result"].entry_id)
    assert entry is not None
    return entry


async def run(hass: HomeAssistant, tool: str) -> dict[str, Any]:
    """The run_tool action's response (no entry named: the server is the
    only one, the sign-in does not count)."""
    response: dict[str, Any] = await call_service(hass, "run_tool", {"tool": tool})
    return response


def expire(hass: HomeAssistant, entry: ConfigEntry) -> None:
    """Make the stored access token one that expired a minute ago."""
    token = {**entry.data["token"], "expires_at": time.time() - 60}
    hass.config_entries.async_update_entry(entry, data={**entry.data, "token": token})


@pytest.mark.usefixtures("current_request_with_host", "server_entry")
async def test_sign_in_then_the_tools_send_its_token(
    hass: HomeAssistant,
    provider: OAuthProvider,
    hass_client_no_auth: ClientSessionGenerator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The sign-in holds the token the provider gave for the code; the tools
    send it as a bearer token, and what the model reads is the API's answer."""
    caplog.set_level(logging.DEBUG)
    entry = await sign_in(hass, provider, hass_client_no_auth)

    assert entry.state is ConfigEntryState.LOADED
    assert entry.data["auth_implementation"] == "spotify_app"
    assert entry.data[CONF_SCOPES] == SCOPES.split()
    assert entry.data["token"]["access_token"] == provider.access_token
    assert provider.grants == ["authorization_code"]
    skipped = await run(hass, "next_song")
    assert (skipped["ok"], skipped["status"]) == (True, 204)
    tomorrow = await run(hass, "tomorrow")
    assert tomorrow["ok"] is True, tomorrow
    assert tomorrow["result"] == (
        '[{"summary":"Dentist","start.dateTime":"2026-12-04T09:30:00+01:00"},'
        '{"summary":"Piano lesson","start.dateTime":"2026-12-04T17:00:00+01:00"}]'
    )
    api = [r for r in provider.requests if r.path.startswith(("/v1", "/calendar"))]
    assert [r.headers["Authorization"] for r in api] == [
        f"Bearer {provider.access_token}"
    ] * 2
    # A sign-in is no server: it has no agents and no options.
    assert entry.supports_options is False
    assert entry.supported_subentry_types == {}
    # Never a token in the logs or the diagnostics.
    diagnostics = json.dumps(await async_get_config_entry_diagnostics(hass, entry))
    for token in (provider.access_token, provider.refresh_token):
        assert token is not None
        assert token not in caplog.text
        assert token not in diagnostics
    assert "expires_at" in diagnostics


@pytest.mark.usefixtures("current_request_with_host", "server_entry")
async def test_an_expired_token_is_refreshed_before_the_call(
    hass: HomeAssistant,
    provider: OAuthProvider,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    """The call refreshes the token first, sends the new one, and the entry
    keeps it (with the refresh token the provider did not renew)."""
    entry = await sign_in(hass, provider, hass_client_no_auth)
    first = provider.access_token
    expire(hass, entry)

    skipped = await run(hass, "next_song")

    assert skipped["ok"] is True
    assert provider.grants == ["authorization_code", "refresh_token"]
    assert provider.access_token != first
    assert entry.data["token"]["access_token"] == provider.access_token
    assert entry.data["token"]["refresh_token"] == provider.refresh_token
    assert entry.data["token"]["expires_at"] > time.time() + 3000
    last = provider.requests[-1]
    assert last.headers["Authorization"] == f"Bearer {provider.access_token}"


@pytest.mark.usefixtures("current_request_with_host", "server_entry")
async def test_a_refused_refresh_asks_to_sign_in_again(
    hass: HomeAssistant,
    provider: OAuthProvider,
    llm_server: FakeLLMServer,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    """The provider revoked the refresh token: nothing is sent to the API,
    the agent says the user must sign in again (whatever the model
    writes), Home Assistant asks to re-authenticate the sign-in, and after
    signing in again the tool works."""
    entry = await sign_in(hass, provider, hass_client_no_auth)
    expire(hass, entry)
    provider.refuse_refresh = True
    llm_server.add(
        tool_calls_stream(("next_song", {})), text_stream("Skipped to the next song!")
    )

    turn = await converse(hass, "Next song")

    assert speech(turn) == (
        "That did not happen: you need to sign in to the service again in "
        "Home Assistant."
    )
    told = llm_server.requests[1]["messages"][-1]
    assert told["role"] == "tool"
    assert "the sign-in 'spotify' has expired" in told["content"]
    assert not any(r.path.startswith("/v1") for r in provider.requests)
    [flow] = [
        f
        for f in hass.config_entries.flow.async_progress_by_handler(DOMAIN)
        if f["context"]["source"] == config_entries.SOURCE_REAUTH
    ]
    assert flow["context"]["entry_id"] == entry.entry_id

    # Sign in again: the flow says which sign-in, then goes to the service.
    result = await hass.config_entries.flow.async_configure(flow["flow_id"])
    assert result["step_id"] == "reauth_sign_in"
    assert result["description_placeholders"] == {"name": "spotify"}
    provider.refuse_refresh = False
    result = await hass.config_entries.flow.async_configure(flow["flow_id"], {})
    result = await go_to_provider(hass, result, hass_client_no_auth)
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "sign_in_updated"
    await hass.async_block_till_done()

    assert entry.data["token"]["access_token"] == provider.access_token
    assert (await run(hass, "next_song"))["ok"] is True


@pytest.mark.usefixtures("server_entry")
async def test_a_tool_of_a_sign_in_nobody_made(hass: HomeAssistant) -> None:
    """No such sign-in: the model reads where to add it, nothing is sent."""
    response = await run(hass, "next_song")

    assert response["ok"] is False
    assert response["result"].startswith("Error: there is no sign-in 'spotify'")
    assert "Sign in to a service" in response["result"]


@pytest.mark.usefixtures("current_request_with_host", "server_entry")
async def test_the_sign_in_form_checks_what_it_is_given(
    hass: HomeAssistant,
    provider: OAuthProvider,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    """A name tools cannot write, URLs that are not web addresses, a name
    another sign-in has: each field says so. Adding a server still works
    from the menu."""
    await sign_in(hass, provider, hass_client_no_auth)
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    flow_id = result["flow_id"]
    result = await hass.config_entries.flow.async_configure(
        flow_id, {"next_step_id": "sign_in"}
    )
    given = {
        CONF_SIGN_IN: "my calendar",
        CONF_AUTHORIZE_URL: "accounts.google.com/o/oauth2/v2/auth",
        CONF_TOKEN_URL: "ftp://oauth2.googleapis.com/token",
    }
    result = await hass.config_entries.flow.async_configure(flow_id, given)
    assert result["errors"] == {
        CONF_SIGN_IN: "invalid_sign_in_name",
        CONF_AUTHORIZE_URL: "invalid_oauth_url",
        CONF_TOKEN_URL: "invalid_oauth_url",
    }
    given = {
        CONF_SIGN_IN: "spotify",
        CONF_AUTHORIZE_URL: f"{provider.url}/authorize",
        CONF_TOKEN_URL: f"{provider.url}/token",
    }
    result = await hass.config_entries.flow.async_configure(flow_id, given)
    assert result["errors"] == {CONF_SIGN_IN: "sign_in_name_taken"}

    menu = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    server = await hass.config_entries.flow.async_configure(
        menu["flow_id"], {"next_step_id": "server"}
    )
    assert (server["type"], server["step_id"]) == (FlowResultType.FORM, "user")


@pytest.mark.usefixtures("current_request_with_host", "server_entry")
async def test_the_authorize_url_keeps_its_own_query(
    hass: HomeAssistant, provider: OAuthProvider
) -> None:
    """Google gives a refresh token only to `access_type=offline`: written
    in the authorize URL, it is sent with the flow's own parameters."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "sign_in"}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {
            CONF_SIGN_IN: "calendar",
            CONF_AUTHORIZE_URL: f"{provider.url}/authorize?access_type=offline&prompt=consent",
            CONF_TOKEN_URL: f"{provider.url}/token",
            CONF_SCOPES: "https://www.googleapis.com/auth/calendar.readonly",
        },
    )
    query = URL(result["url"]).query
    assert query["access_type"] == "offline"
    assert query["prompt"] == "consent"
    assert query["client_id"] == CLIENT_ID
    assert query["scope"] == "https://www.googleapis.com/auth/calendar.readonly"


@pytest.mark.usefixtures("current_request_with_host", "server_entry")
async def test_actions_refuse_a_sign_in_entry(
    hass: HomeAssistant,
    provider: OAuthProvider,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    """An action given the sign-in's entry says it is no server."""
    entry = await sign_in(hass, provider, hass_client_no_auth)

    with pytest.raises(ServiceValidationError) as raised:
        await call_service(hass, "get_tools", {"config_entry_id": entry.entry_id})
    assert raised.value.translation_key == "entry_is_sign_in"


@pytest.mark.usefixtures("current_request_with_host", "server_entry")
async def test_reconfigure_changes_the_scopes_and_signs_in_anew(
    hass: HomeAssistant,
    provider: OAuthProvider,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    """The form opens with the sign-in's values; the new scopes are asked
    for, and the entry keeps the new token under the same name."""
    entry = await sign_in(hass, provider, hass_client_no_auth)
    result = await hass.config_entries.flow.async_init(
        DOMAIN,
        context={
            "source": config_entries.SOURCE_RECONFIGURE,
            "entry_id": entry.entry_id,
        },
    )
    assert result["step_id"] == "sign_in"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {
            CONF_SIGN_IN: "spotify",
            CONF_AUTHORIZE_URL: f"{provider.url}/authorize",
            CONF_TOKEN_URL: f"{provider.url}/token",
            CONF_SCOPES: "user-read-currently-playing",
        },
    )
    assert URL(result["url"]).query["scope"] == "user-read-currently-playing"
    result = await go_to_provider(hass, result, hass_client_no_auth)
    assert (result["type"], result["reason"]) == (
        FlowResultType.ABORT,
        "sign_in_updated",
    )
    await hass.async_block_till_done()

    assert entry.data[CONF_SCOPES] == ["user-read-currently-playing"]
    assert entry.data["token"]["access_token"] == provider.access_token
    assert provider.grants == ["authorization_code", "authorization_code"]
    assert entry.state is ConfigEntryState.LOADED


@pytest.mark.usefixtures("current_request_with_host", "server_entry")
async def test_a_provider_that_is_down_is_not_a_sign_in_to_redo(
    hass: HomeAssistant,
    provider: OAuthProvider,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    """The token endpoint answers 503: nothing is sent, the model reads to
    try again later, and nobody is asked to sign in again."""
    entry = await sign_in(hass, provider, hass_client_no_auth)
    expire(hass, entry)
    provider.token_status = 503

    response = await run(hass, "next_song")

    assert response["ok"] is False
    assert response["result"] == (
        "Error: the sign-in 'spotify' could not renew its access: its service "
        "did not answer. Try again later"
    )
    assert not any(r.path.startswith("/v1") for r in provider.requests)
    assert not hass.config_entries.flow.async_progress_by_handler(DOMAIN)


@pytest.mark.usefixtures("current_request_with_host", "server_entry")
async def test_a_sign_in_refused_at_start_up_asks_to_sign_in_again(
    hass: HomeAssistant,
    provider: OAuthProvider,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    """Home Assistant starts with an expired token the service will not
    renew: the sign-in does not load, re-authentication is asked for, and
    its tools say the sign-in expired."""
    entry = await sign_in(hass, provider, hass_client_no_auth)
    expire(hass, entry)
    provider.refuse_refresh = True

    assert not await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()

    assert entry.state is ConfigEntryState.SETUP_ERROR
    assert any(entry.async_get_active_flows(hass, {config_entries.SOURCE_REAUTH}))
    response = await run(hass, "next_song")
    assert response["result"].startswith("Error: the sign-in 'spotify' has expired")


@pytest.mark.usefixtures("server_entry")
async def test_application_credentials_offer_this_integration(
    hass: HomeAssistant, hass_ws_client: WebSocketGenerator
) -> None:
    """Settings > Application credentials lists HTTP Tools Agent, and its
    dialog gives the redirect URI to register at the service."""
    client = await hass_ws_client(hass)
    await client.send_json_auto_id({"type": "application_credentials/config"})
    answer = await client.receive_json()

    assert DOMAIN in answer["result"]["domains"]
    assert answer["result"]["integrations"][DOMAIN] == {
        "description_placeholders": {
            "redirect_uri": "https://my.home-assistant.io/redirect/oauth"
        }
    }
