"""wyoming-satellite 1.0.0, answering Home Assistant's `ping`.

    python dev/voice/satellite.py [wyoming-satellite's arguments]

Runs with `.venv-satellite`'s Python. wyoming-satellite 1.0.0, the only
release on PyPI, predates Wyoming's ping (its wyoming 1.4.1 has no such
event), while Home Assistant's `wyoming` integration drops a satellite that
sends nothing for 5 s after its ping: every turn whose answer takes longer
than that after the user stopped talking was cancelled and the satellite
reconnected. Later satellite releases answer `ping` with `pong`; this does
the same, and changes nothing else.
"""

from __future__ import annotations

import asyncio
from typing import Any

from wyoming.event import Event
from wyoming_satellite import __main__ as satellite

_handle_event = satellite.SatelliteEventHandler.handle_event


async def handle_event(self: Any, event: Event) -> bool:
    """Answer `ping` with `pong` (echoing its text); the rest as before."""
    if event.type == "ping":
        text = (event.data or {}).get("text")
        await self.write_event(Event(type="pong", data={"text": text}))
        return True
    result: bool = await _handle_event(self, event)
    return result


satellite.SatelliteEventHandler.handle_event = handle_event

if __name__ == "__main__":
    asyncio.run(satellite.main())
