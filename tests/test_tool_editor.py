"""The tool editor of the options flow: add, edit, rename, delete; secrets."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
import probatio
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import DOMAIN
from custom_components.http_tools_agent.flows.agent_form import agent_form_values
from custom_components.http_tools_agent.tools.agent_tools import issue_id

from .kit import call_service, converse, tool_names
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

pytestmark = pytest.mark.usefixtures("setup_integration")


async def open_step(hass: HomeAssistant, entry: MockConfigEntry, step: str) -> Any:
    """Open the options menu and pick `step`."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.MENU
    return await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": step}
    )


async def submit(hass: HomeAssistant, result: Any, data: dict[str, Any]) -> Any:
    """Submit a form; let a reload finish."""
    result = await hass.config_entries.options.async_configure(result["flow_id"], data)
    await hass.async_block_till_done()
    return result


def suggested(result: Any, key: str) -> Any:
    """The value a form field shows."""
    for field in result["data_schema"].schema:
        if str(field) == key:
            return (field.description or {}).get("suggested_value")
    raise KeyError(key)


def doorbell(endpoint: ToolEndpoint, **changes: Any) -> dict[str, Any]:
    """The tool form filled in for a doorbell tool."""
    return {
        "name": "ring_doorbell",
        "description": "Ring the doorbell chime.",
        "method": "post",
        "url": f"{endpoint.url}/doorbell/{{tune}}",
        "headers": [{"name": "X-Key", "value": "{secret:bell_key}"}],
        "parameters": {
            "type": "object",
            "properties": {"tune": {"type": "string", "enum": ["ding", "dong"]}},
            "required": ["tune"],
        },
        "timeout": 5,
        "enabled": True,
        "verify_ssl": True,
        **changes,
    }


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """A secret the doorbell uses."""
    return {"secrets": {"bell_key": "bell-secret-value"}}


async def test_menu_lists_the_tools_by_name(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """The menu names the tools, the active ones and the secrets (names only)."""
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    placeholders = dict(result["description_placeholders"] or {})
    assert placeholders["tools"] == "get_weather, send_webhook"
    assert placeholders["active_tools"] == "get_weather, send_webhook"
    assert placeholders["secrets"] == "bell_key"
    assert "bell-secret-value" not in str(result)


async def test_add_a_tool(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A valid form is saved, normalised, and the next turn can call it."""
    result = await open_step(hass, config_entry, "add_tool")
    assert result["step_id"] == "add_tool"
    assert suggested(result, "method") == "GET"
    assert suggested(result, "enabled") is True
    result = await submit(hass, result, doorbell(tool_endpoint))
    assert result["type"] is FlowResultType.CREATE_ENTRY
    saved = config_entry.options["tools"][-1]
    assert saved == {
        "name": "ring_doorbell",
        "description": "Ring the doorbell chime.",
        "parameters": doorbell(tool_endpoint)["parameters"],
        "url": f"{tool_endpoint.url}/doorbell/{{tune}}",
        "method": "POST",
        "headers": {"X-Key": "{secret:bell_key}"},
        "timeout": 5.0,
    }
    llm_server.add(
        tool_calls_stream(("ring_doorbell", {"tune": "ding"})), text_stream("Rung.")
    )
    await converse(hass, "Ring the bell")
    request = next(r for r in tool_endpoint.requests if r.path == "/doorbell/ding")
    assert request.headers["X-Key"] == "bell-secret-value"


@pytest.mark.parametrize(
    ("changes", "errors", "fragment"),
    [
        (
            {"url": "ftp://x/"},
            {"url": "invalid_tool_url"},
            "tool 'ring_doorbell': url: must be an http or https URL",
        ),
        (
            {"name": "get_weather"},
            {"name": "invalid_tool_name"},
            "tool 'get_weather': name: another tool already has this name",
        ),
        (
            {"name": "bad name"},
            {"name": "invalid_tool_name"},
            "name: 'bad name' may only contain letters",
        ),
        (
            {"headers": [{"name": "X-Key", "value": "{secret:nope}"}]},
            {"headers": "invalid_tool_headers"},
            "tool 'ring_doorbell': headers.X-Key: secret 'nope' is not defined",
        ),
        (
            {
                "parameters": {
                    "type": "object",
                    "properties": {"tune": {"type": "strng"}},
                }
            },
            {"parameters": "invalid_tool_parameters"},
            "tool 'ring_doorbell': parameters.properties.tune.type: "
            "'strng' is not a JSON Schema type",
        ),
        (
            {"url": "http://x/{tune}/{room}"},
            {"url": "invalid_tool_url"},
            "url: placeholder '{room}' names no declared parameter",
        ),
        (
            {"method": "GE T"},
            {"method": "invalid_tool_method"},
            "tool 'ring_doorbell': method: 'GE T' is not a valid HTTP method",
        ),
        (
            {"sentences": {"en": ["ring the bell", "ring the {bell}"]}},
            {"sentences": "invalid_tool_sentences"},
            "tool 'ring_doorbell': sentences.en[0]: no slot fills the required "
            "parameter 'tune'",
        ),
    ],
)
async def test_invalid_tool_form_names_tool_and_field(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
    changes: dict[str, Any],
    errors: dict[str, str],
    fragment: str,
) -> None:
    """The error sits under the field, names tool and field; nothing is saved;
    what was typed stays in the form."""
    before = dict(config_entry.options)
    result = await open_step(hass, config_entry, "add_tool")
    form = doorbell(tool_endpoint, **changes)
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == errors
    field = next(iter(errors))
    assert fragment in result["description_placeholders"][f"{field}_error"]
    assert suggested(result, "url") == form["url"]
    assert dict(config_entry.options) == before


async def test_edit_and_rename_keep_the_agents_choice(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """Editing shows the stored tool; a rename carries an agent's choice over."""
    agent = next(iter(config_entry.subentries.values()))
    hass.config_entries.async_update_subentry(
        config_entry, agent, data={**agent.data, "http_tools": ["get_weather"]}
    )
    await hass.async_block_till_done()

    result = await open_step(hass, config_entry, "edit_tool")
    assert result["step_id"] == "edit_tool"
    result = await submit(hass, result, {"tool": "get_weather"})
    assert result["step_id"] == "change_tool"
    assert result["description_placeholders"]["tool"] == "get_weather"
    values = {
        key: suggested(result, key)
        for key in ("name", "description", "method", "url", "headers", "parameters")
    }
    assert values["method"] == "GET"
    assert values["headers"] == []
    assert values["url"] == f"{tool_endpoint.url}/weather/{{city}}"

    result = await submit(
        hass,
        result,
        {**values, "name": "weather_now", "enabled": True, "verify_ssl": True},
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    names = [t["name"] for t in config_entry.options["tools"]]
    assert names == ["weather_now", "send_webhook"]  # same place in the list
    agent = config_entry.subentries[agent.subentry_id]
    assert agent.data["http_tools"] == ["weather_now"]
    assert tool_names(await call_service(hass, "get_tools")) == names


async def test_delete_reports_agents_that_chose_the_tool(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    issue_registry: ir.IssueRegistry,
) -> None:
    """Deleting a tool an agent chose keeps the name in the agent and raises a
    repair issue naming agent and tool; choosing again clears it."""
    agent = next(iter(config_entry.subentries.values()))
    hass.config_entries.async_update_subentry(
        config_entry,
        agent,
        data={**agent.data, "http_tools": ["get_weather", "send_webhook"]},
    )
    await hass.async_block_till_done()

    result = await open_step(hass, config_entry, "delete_tool")
    result = await submit(hass, result, {"tools_to_delete": ["get_weather"]})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert [t["name"] for t in config_entry.options["tools"]] == ["send_webhook"]
    assert config_entry.subentries[agent.subentry_id].data["http_tools"] == [
        "get_weather",
        "send_webhook",
    ]
    issue = issue_registry.async_get_issue(
        DOMAIN, issue_id(config_entry.entry_id, agent.subentry_id)
    )
    assert issue is not None
    assert issue.translation_placeholders == {
        "agent": agent.title,
        "server": config_entry.title,
        "tools": "get_weather",
    }

    # The agent's settings list the missing name, to be deselected.
    result = await config_entry.start_subentry_reconfigure_flow(hass, agent.subentry_id)
    selector = next(
        v for k, v in result["data_schema"].schema.items() if str(k) == "http_tools"
    )
    assert selector.config["options"] == [
        {"label": "send_webhook", "value": "send_webhook"},
        {"label": "get_weather (missing)", "value": "get_weather"},
    ]
    # What the form shows (its advanced section nested), the tool deselected.
    data = agent_form_values(dict(agent.data))
    data.pop("prompt")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {**data, "http_tools": ["send_webhook"]}
    )
    await hass.async_block_till_done()
    assert result["reason"] == "reconfigure_successful"
    assert (
        issue_registry.async_get_issue(
            DOMAIN, issue_id(config_entry.entry_id, agent.subentry_id)
        )
        is None
    )


async def test_secrets_form(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """Values are typed in a password field, never shown back; a secret a tool
    uses cannot be removed; bad input saves nothing."""
    result = await open_step(hass, config_entry, "add_tool")
    await submit(hass, result, doorbell(tool_endpoint))

    result = await open_step(hass, config_entry, "secrets")
    assert result["step_id"] == "secrets"
    assert result["description_placeholders"]["secrets"] == "bell_key"
    value_field = next(
        k for k in result["data_schema"].schema if str(k) == "secret_value"
    )
    assert result["data_schema"].schema[value_field].config["type"] == "password"
    assert "bell-secret-value" not in str(result)

    before = dict(config_entry.options)
    cases: list[tuple[dict[str, Any], dict[str, str]]] = [
        (
            {"secret_name": "bad name", "secret_value": "x"},
            {"secret_name": "invalid_secret_name"},
        ),
        ({"secret_name": "hue_user"}, {"secret_value": "secret_value_required"}),
        ({"secret_value": "abc"}, {"secret_name": "secret_name_required"}),
        (
            {"secret_name": "k", "secret_value": "a\nb"},
            {"secret_value": "invalid_secret_value"},
        ),
        ({"remove_secrets": ["bell_key"]}, {"remove_secrets": "secret_in_use"}),
    ]
    for form, errors in cases:
        result = await submit(hass, result, form)
        assert result["errors"] == errors, form
        assert suggested(result, "secret_value") is None  # never shown back
    assert result["description_placeholders"]["secrets_error"] == (
        "bell_key (ring_doorbell)"
    )
    assert dict(config_entry.options) == before

    result = await submit(
        hass, result, {"secret_name": "hue_user", "secret_value": " hue-123 \n"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["secrets"] == {
        "bell_key": "bell-secret-value",
        "hue_user": "hue-123",
    }
    result = await open_step(hass, config_entry, "secrets")
    result = await submit(hass, result, {"remove_secrets": ["hue_user"]})
    assert config_entry.options["secrets"] == {"bell_key": "bell-secret-value"}


async def test_allowed_hosts_in_settings(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """Each entry is checked; a valid list is saved."""
    result = await open_step(hass, config_entry, "settings")
    form = {
        "tools": suggested(result, "tools"),
        "tools_enabled": "auto",
        "max_tool_iterations": 4,
        "tool_timeout": 15,
        "tool_result_max_chars": 2000,
    }
    result = await submit(
        hass, result, {**form, "allowed_hosts": ["127.0.0.1", "http://x.org/"]}
    )
    assert result["errors"] == {"allowed_hosts": "invalid_allowed_hosts"}
    assert (
        "'http://x.org/' is not a host name"
        in (result["description_placeholders"]["hosts_error"])
    )
    result = await submit(
        hass, result, {**form, "allowed_hosts": ["127.0.0.1", "*.lan", "10.0.0.0/8"]}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["allowed_hosts"] == ["127.0.0.1", "*.lan", "10.0.0.0/8"]


async def test_delete_needs_a_choice(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """Nothing is ticked at first; submitting nothing deletes nothing."""
    result = await open_step(hass, config_entry, "delete_tool")
    field = next(k for k in result["data_schema"].schema if str(k) == "tools_to_delete")
    # Optional: the frontend ticks the first option of a required list.
    assert isinstance(field, probatio.Optional)
    result = await submit(hass, result, {})
    assert result["errors"] == {"tools_to_delete": "no_tool_selected"}
    assert [t["name"] for t in config_entry.options["tools"]] == [
        "get_weather",
        "send_webhook",
    ]


async def test_the_form_writes_every_new_field(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Body and its format, authentication, the response shape, the tool's
    own sentence and read-only: saved in the file format, shown again when
    the tool is edited, and used by the next call."""
    form = doorbell(
        tool_endpoint,
        url=f"{tool_endpoint.url}/chime",
        parameters={
            "type": "object",
            "properties": {"tune": {"type": "string"}},
            "required": ["tune"],
        },
        headers=[],
        body_format="form",
        body={"tune": "{tune}", "volume": 7, "key": "{secret:bell_key}"},
        auth="basic",
        auth_username="door",
        auth_password="{secret:bell_key}",
        response={"fields": ["ok"]},
        speech="Rung.",
        sentences={"en": ["play {tune} on the doorbell"]},
        read_only="no",
        destructive="auto",
        idempotent="auto",
    )
    result = await open_step(hass, config_entry, "add_tool")
    assert suggested(result, "read_only") == "auto"
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    saved = config_entry.options["tools"][-1]
    assert {key: saved[key] for key in saved if key not in ("name", "description")} == {
        "parameters": form["parameters"],
        "url": f"{tool_endpoint.url}/chime",
        "method": "POST",
        "body": {"tune": "{tune}", "volume": 7, "key": "{secret:bell_key}"},
        "body_format": "form",
        "auth": {"type": "basic", "username": "door", "password": "{secret:bell_key}"},
        "response": {"fields": ["ok"]},
        "speech": "Rung.",
        "sentences": {"en": ["play {tune} on the doorbell"]},
        "read_only": False,
        "timeout": 5.0,
    }

    result = await open_step(hass, config_entry, "edit_tool")
    result = await submit(hass, result, {"tool": "ring_doorbell"})
    shown = {
        key: suggested(result, key)
        for key in (
            "body_format",
            "body",
            "auth",
            "auth_username",
            "speech",
            "sentences",
            "read_only",
        )
    }
    assert shown == {
        "body_format": "form",
        "body": saved["body"],
        "auth": "basic",
        "auth_username": "door",
        "speech": "Rung.",
        "sentences": {"en": ["play {tune} on the doorbell"]},
        "read_only": "no",
    }

    llm_server.add(tool_calls_stream(("ring_doorbell", {"tune": "ding"})))
    await converse(hass, "Ring the bell")
    request = next(r for r in tool_endpoint.requests if r.path == "/chime")
    assert request.body == b"tune=ding&volume=7&key=bell-secret-value"
    assert request.headers["Authorization"].startswith("Basic ")


async def test_a_composite_tool_in_the_form(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """Steps instead of a URL; a step naming no earlier step is shown under
    Steps."""
    steps = [
        {"name": "first", "method": "GET", "url": f"{tool_endpoint.url}/a/{{tune}}"},
        {
            "name": "second",
            "method": "GET",
            "url": f"{tool_endpoint.url}/b?x={{first.ok}}",
        },
    ]
    result = await open_step(hass, config_entry, "add_tool")
    form = doorbell(tool_endpoint, url="", headers=[], steps=steps)
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["tools"][-1]["steps"] == steps

    result = await open_step(hass, config_entry, "add_tool")
    broken = [{**steps[0], "url": f"{tool_endpoint.url}/a/{{tune}}?y={{later.id}}"}]
    result = await submit(
        hass,
        result,
        doorbell(tool_endpoint, name="other", url="", headers=[], steps=broken),
    )
    assert result["errors"] == {"steps": "invalid_tool_steps"}
    assert "names no earlier step" in result["description_placeholders"]["steps_error"]


async def test_a_login_kept_across_calls_in_the_form(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """A step's `session` is kept as written; a wrong one is shown under
    Steps, naming the step's field."""
    login = {
        "name": "login",
        "method": "POST",
        "url": f"{tool_endpoint.url}/auth",
        "body": {"tune": "{tune}"},
        "session": {
            "keep_seconds": 1500,
            "logout": {"url": f"{tool_endpoint.url}/auth", "method": "DELETE"},
        },
    }
    after = {
        "name": "ring",
        "method": "GET",
        "url": f"{tool_endpoint.url}/b",
        "headers": {"X-FTL-SID": "{login.session.sid}"},
    }
    result = await open_step(hass, config_entry, "add_tool")
    form = doorbell(tool_endpoint, url="", headers=[], steps=[login, after])
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["tools"][-1]["steps"] == [login, after]

    result = await open_step(hass, config_entry, "add_tool")
    broken = {**login, "session": {"keep_seconds": 0}}
    result = await submit(
        hass,
        result,
        doorbell(
            tool_endpoint, name="other", url="", headers=[], steps=[broken, after]
        ),
    )
    assert result["errors"] == {"steps": "invalid_tool_steps"}
    assert (
        "steps[0].session.keep_seconds: is required"
        in (result["description_placeholders"]["steps_error"])
    )


async def test_the_form_takes_a_shape_that_picks_items(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A response shape with where, sort and last_items is saved as written;
    a condition the format lacks is refused under the field, named."""
    picks = {
        "where": {"ok": True, "at": {"above": "2025-12-01"}},
        "sort": {"by": "at", "order": "desc"},
        "last_items": 2,
        "fields": ["ok"],
    }
    result = await open_step(hass, config_entry, "add_tool")
    result = await submit(hass, result, doorbell(tool_endpoint, response=picks))
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["tools"][-1]["response"] == picks

    before = dict(config_entry.options)
    result = await open_step(hass, config_entry, "add_tool")
    bad = {"where": {"state": {"is": "on"}}}
    form = doorbell(tool_endpoint, name="ring_again", response=bad)
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"response": "invalid_tool_response"}
    assert (
        "tool 'ring_again': response.where.state.is: unknown condition"
        in result["description_placeholders"]["response_error"]
    )
    assert dict(config_entry.options) == before


async def test_the_form_keeps_a_paged_list(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A tool whose list is over several pages is saved with its pages, shown
    again when edited (so saving it unchanged keeps them), and a wrong
    pages field is refused under the field, named."""
    pages = {"page": "page", "max_pages": 3}
    form = doorbell(tool_endpoint, method="get", read_only="yes", pages=pages)
    result = await open_step(hass, config_entry, "add_tool")
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["tools"][-1]["pages"] == pages

    result = await open_step(hass, config_entry, "edit_tool")
    result = await submit(hass, result, {"tool": "ring_doorbell"})
    assert suggested(result, "pages") == pages

    before = dict(config_entry.options)
    result = await open_step(hass, config_entry, "add_tool")
    wrong = doorbell(
        tool_endpoint,
        name="ring_again",
        method="get",
        pages={"page": "page", "max_pages": 1},
    )
    result = await submit(hass, result, wrong)
    assert result["errors"] == {"pages": "invalid_tool_pages"}
    assert (
        "tool 'ring_again': pages.max_pages: must be an integer from 2 to 50"
        in result["description_placeholders"]["pages_error"]
    )
    assert dict(config_entry.options) == before


async def test_the_form_keeps_an_oauth2_sign_in(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A tool that signs in with OAuth2 is written in the form (the sign-in's
    name in the username box) and shown again when edited, so saving it
    from the form keeps its sign-in."""
    form = doorbell(tool_endpoint, auth="oauth2", auth_username="spotify")
    result = await open_step(hass, config_entry, "add_tool")
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    stored = config_entry.options["tools"][-1]["auth"]
    assert stored == {"type": "oauth2", "sign_in": "spotify"}

    result = await open_step(hass, config_entry, "edit_tool")
    result = await submit(hass, result, {"tool": "ring_doorbell"})
    assert suggested(result, "auth") == "oauth2"
    assert suggested(result, "auth_username") == "spotify"
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["tools"][-1]["auth"] == stored
