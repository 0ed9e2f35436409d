"""The prompt's start, sent to the server before the first question.

llama.cpp, llama-cpp-python, vLLM and Ollama keep the prompt they last read
and read again only what a new request changes. After the server or Home
Assistant started, the first question pays for the whole system prompt and
tools: with Assist and 15 tools about 1,900 tokens, 51 s on 2 cores, where a
follow-up takes 10 s. So each agent sends the start of its prompt ahead: as
soon as it is set up (Home Assistant may still be starting; a question asked
meanwhile waits for the warm-up, `turns`), again once Home Assistant has
started if what the prompt lists changed while it started, when its settings
changed (the entry reloads), when its server answers again after it was away,
and, with Assist, when what Assist's prompt lists may have changed (exposed
entities, their names and areas: the events Home Assistant's own agent
follows), once the changes settle.

The request is the one a turn would send now (`Turn.request` over a chat log
that Home Assistant filled as it fills a turn's: the same system prompt from
the prompt template and the APIs' prompts, the examples, the tools, the extra
body), with a short question and `max_tokens: 1`: the server reads the prompt
and writes one token, and its cache then holds everything a turn sends before
the user's words. It is sent again only when that start changed. Assist's
prompt names the asking device's area (and offers timers to a device that
has them): a warm-up is made for the device of the agent's latest turn, and
for no device before its first (a typed question, an automation).

`warm_up` is `auto` by default: on for servers on this machine or the local
network, never for a hosted API, which bills the tokens. A warm-up that fails
is logged at debug level and forgotten: it is a head start, nothing depends on
it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
import json
import time
from typing import TYPE_CHECKING

from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_listen_entity_updates,
)
from homeassistant.const import EVENT_STATE_CHANGED
from homeassistant.core import (
    CALLBACK_TYPE,
    CoreState,
    EventStateChangedData,
    HomeAssistant,
    callback,
)
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)
from homeassistant.helpers.debounce import Debouncer
from homeassistant.helpers.start import async_at_started
from homeassistant.util.hass_dict import HassKey
import httpx
import openai

from ..const import LOGGER
from ..engine.words import word_set
from .client import Request, async_complete
from .info import KIND_OPENAI, ServerInfo
from .profiles import hosted

if TYPE_CHECKING:
    from ..runtime import HttpToolsConfigEntry

# The question of the warm-up: the server's cache keeps what comes before it.
WARM_UP_TEXT = "Hi"
# Seconds after a change of what Assist's prompt lists before the warm-up
# (exposing entities one by one is one change).
CHANGE_COOLDOWN = 10.0
# A small model on a CPU reads some 40 tokens a second; a long prompt on a
# slow machine takes minutes, and nobody waits for this request.
WARM_UP_TIMEOUT = 600.0

# Entity and device fields that Assist's prompt shows.
_ENTITY_FIELDS = word_set("""
    aliases area_id device_id disabled_by entity_category entity_id hidden_by
    name original_name
""")
_DEVICE_FIELDS = frozenset({"area_id", "name", "name_by_user"})


# Per agent (subentry id): the device and language of its latest turn, kept
# across reloads (Assist's prompt names the asking device's area).
_LAST_ASKED: HassKey[dict[str, tuple[str | None, str]]] = HassKey(
    "http_tools_agent_last_asked"
)


@callback
def last_asked(hass: HomeAssistant) -> dict[str, tuple[str | None, str]]:
    """The device and language of each agent's latest turn."""
    return hass.data.setdefault(_LAST_ASKED, {})


def warm_up_wanted(setting: str, base_url: str, server: ServerInfo) -> bool:
    """Whether an agent set to `setting` warms its server up (`auto`: a
    server on this machine or the local network, not a hosted API)."""
    if setting in ("on", "off"):
        return setting == "on"
    return server.kind != KIND_OPENAI and not hosted(base_url)


def prompt_start(request: Request) -> str:
    """What a server's cache must hold for a turn to start warm: the system
    message, the tools and every field that changes how they are rendered."""
    params = request.params
    messages = list(params["messages"])
    return json.dumps(
        [
            params["model"],
            messages[0] if messages else None,
            params.get("tools"),
            params.get("tool_choice"),
            request.extra_body,
        ],
        sort_keys=True,
        default=str,
    )


@callback
def _entity_changed(event_data: er.EventEntityRegistryUpdatedData) -> bool:
    return event_data["action"] != "update" or not _ENTITY_FIELDS.isdisjoint(
        event_data["changes"]
    )


@callback
def _device_changed(event_data: dr.EventDeviceRegistryUpdatedData) -> bool:
    return event_data["action"] == "update" and not _DEVICE_FIELDS.isdisjoint(
        event_data["changes"]
    )


@callback
def _added_or_removed(event_data: EventStateChangedData) -> bool:
    return event_data["old_state"] is None or event_data["new_state"] is None


class PromptWarmer:
    """Sends one agent's prompt start when its server may not hold it."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: HttpToolsConfigEntry,
        name: str,
        build: Callable[[], Awaitable[Request]],
    ) -> None:
        """`build` makes the request a turn would send now."""
        self._hass = hass
        self._entry = entry
        self._name = name
        self._build = build
        # The prompt start last sent (`prompt_start`).
        self._sent: str | None = None
        self._running = False
        self._again = False
        self._debouncer = Debouncer(
            hass,
            LOGGER,
            cooldown=CHANGE_COOLDOWN,
            immediate=False,
            function=self._async_changed,
            background=True,
        )

    @callback
    def async_start(self, *, follow_assist: bool) -> CALLBACK_TYPE:
        """Warm up now, and again once Home Assistant has started if the
        prompt changed meanwhile; with Assist, again after what its prompt
        lists changed. Returns how to stop."""
        if self._hass.state is not CoreState.running:
            # A question may come before Home Assistant has started.
            self.async_warm()
        unsubscribe = [
            async_at_started(self._hass, self._async_started),
            self._debouncer.async_shutdown,
        ]
        if follow_assist:
            bus = self._hass.bus
            changed = self._async_schedule
            unsubscribe += [
                bus.async_listen(ar.EVENT_AREA_REGISTRY_UPDATED, changed),
                bus.async_listen(
                    er.EVENT_ENTITY_REGISTRY_UPDATED,
                    changed,
                    event_filter=_entity_changed,
                ),
                bus.async_listen(
                    dr.EVENT_DEVICE_REGISTRY_UPDATED,
                    changed,
                    event_filter=_device_changed,
                ),
                bus.async_listen(
                    EVENT_STATE_CHANGED, changed, event_filter=_added_or_removed
                ),
                async_listen_entity_updates(
                    self._hass, conversation.DOMAIN, self._debouncer.async_schedule_call
                ),
            ]

        @callback
        def stop() -> None:
            for unsub in unsubscribe:
                unsub()

        return stop

    @callback
    def async_warm(self, *, again: bool = False) -> None:
        """Send the prompt's start unless it was the last one sent; `again`:
        even then (the server was away: its cache may be empty)."""
        if again:
            self._sent = None
        if self._running:
            self._again = True
            return
        self._running = True
        self._entry.async_create_background_task(
            self._hass, self._async_run(), f"http_tools_agent warm-up {self._name}"
        )

    async def _async_started(self, hass: HomeAssistant) -> None:
        self.async_warm()

    @callback
    def _async_schedule(self, _event: object) -> None:
        self._debouncer.async_schedule_call()

    @callback
    def _async_changed(self) -> None:
        # While Home Assistant starts, entities keep coming: `async_at_started`
        # warms up again once they are all there.
        if self._hass.state is CoreState.running:
            self.async_warm()

    async def _async_run(self) -> None:
        try:
            self._again = True
            while self._again:
                self._again = False
                await self._async_send()
        finally:
            self._running = False

    async def _async_send(self) -> None:
        # Never beside a turn: a server may cut the turn's stream for it
        # (`turns`); the turn's device may change what is sent.
        await self._entry.runtime_data.turns.async_wait_idle()
        try:
            request = await self._build()
        except HomeAssistantError as err:
            LOGGER.debug("No warm-up for %s: %s", self._name, err)
            return
        start = prompt_start(request)
        if start == self._sent:
            return
        params = request.params.copy()
        params["max_tokens"] = 1
        runtime = self._entry.runtime_data
        client = runtime.client.with_options(timeout=WARM_UP_TIMEOUT, max_retries=0)
        began = time.monotonic()
        try:
            async with runtime.turns.warm_up():
                await async_complete(client, params, request.extra_body)
        except (openai.OpenAIError, httpx.HTTPError, ValueError) as err:
            LOGGER.debug(
                "The warm-up of %s failed (%s): its first question reads the "
                "whole prompt",
                self._name,
                err,
            )
            return
        self._sent = start
        LOGGER.debug(
            "Warmed up %s: the server read its prompt's start in %.1f s",
            self._name,
            time.monotonic() - began,
        )
