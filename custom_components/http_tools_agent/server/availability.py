"""Whether an entry's LLM server answers, as its agents show it.

A turn that cannot reach the server marks it unavailable: one warning in the
log, the agents show `unavailable`, and the server's model list is checked
every `RECHECK_INTERVAL` until it answers. Any answer (a turn, or the check)
marks it available again: one info line. Turns are never refused while it
is unavailable: the next one may find the server back.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from homeassistant.core import CALLBACK_TYPE, HassJob, HomeAssistant, callback
from homeassistant.helpers.event import async_call_later
import openai

from ..const import LOGGER
from .client import ServerCheckError, async_list_models

RECHECK_INTERVAL = timedelta(seconds=60)


class ServerAvailability:
    """The availability of one entry's server, logged once per change."""

    def __init__(
        self, hass: HomeAssistant, client: openai.AsyncOpenAI, name: str
    ) -> None:
        """Start available: setup has just checked the server."""
        self._hass = hass
        self._client = client
        self._name = name
        self.available = True
        self._listeners: list[CALLBACK_TYPE] = []
        self._cancel_recheck: CALLBACK_TYPE | None = None
        self._stopped = False
        self._recheck_job = HassJob(
            self._async_recheck,
            "http_tools_agent server recheck",
            cancel_on_shutdown=True,
        )

    @callback
    def async_add_listener(self, listener: CALLBACK_TYPE) -> Callable[[], None]:
        """Call `listener` on every change; return how to stop."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    @callback
    def async_mark_unavailable(self, reason: str) -> None:
        """A turn could not reach the server (`reason`: what it saw)."""
        if not self.available:
            return
        self.available = False
        LOGGER.warning(
            "The language model server of %s cannot be reached (%s); "
            "checking it every %d s until it answers",
            self._name,
            reason,
            RECHECK_INTERVAL.total_seconds(),
        )
        self._schedule_recheck()
        self._notify()

    @callback
    def async_mark_available(self) -> None:
        """The server answered."""
        if self.available:
            return
        self.available = True
        LOGGER.info("The language model server of %s answers again", self._name)
        self._cancel()
        self._notify()

    @callback
    def async_stop(self) -> None:
        """The entry unloads: stop checking for good."""
        self._stopped = True
        self._cancel()

    def _cancel(self) -> None:
        if self._cancel_recheck is not None:
            self._cancel_recheck()
            self._cancel_recheck = None

    def _schedule_recheck(self) -> None:
        if not self._stopped:
            self._cancel_recheck = async_call_later(
                self._hass, RECHECK_INTERVAL, self._recheck_job
            )

    async def _async_recheck(self, _now: datetime) -> None:
        self._cancel_recheck = None
        try:
            await async_list_models(self._client)
        except ServerCheckError as err:
            if err.reason == "cannot_connect":
                LOGGER.debug("%s: the server still cannot be reached", self._name)
                self._schedule_recheck()
                return
            # It answers, if not as it should: the next turn says how.
        self.async_mark_available()

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()
