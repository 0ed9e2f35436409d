"""Checks of an OpenAI-compatible server for the config flows."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import httpx
import httpx2
import openai
from yarl import URL

from .const import CONF_BASE_URL, SERVER_CHECK_TIMEOUT


class ServerCheckError(Exception):
    """The server cannot be used; `reason` is a config flow error key."""

    def __init__(self, reason: str) -> None:
        """Store the reason."""
        super().__init__(reason)
        self.reason = reason


async def async_list_models(client: openai.AsyncOpenAI) -> list[str]:
    """List the server's model ids, raising ServerCheckError with a reason."""
    try:
        page = await client.with_options(
            timeout=SERVER_CHECK_TIMEOUT, max_retries=0
        ).models.list()
        models = [model.id async for model in page]
    except openai.AuthenticationError as err:
        raise ServerCheckError("invalid_auth") from err
    except openai.PermissionDeniedError as err:
        raise ServerCheckError("invalid_auth") from err
    except openai.APIConnectionError as err:
        raise ServerCheckError("cannot_connect") from err
    except (openai.APIStatusError, openai.APIResponseValidationError) as err:
        # 404 and friends: something answers, but not the OpenAI API.
        raise ServerCheckError("not_openai_compatible") from err
    except (ValueError, TypeError, AttributeError, httpx.HTTPError) as err:
        raise ServerCheckError("not_openai_compatible") from err
    return [m for m in models if isinstance(m, str)]


async def async_check_server(hass: HomeAssistant, data: dict[str, Any]) -> list[str]:
    """Connect with entry data and list the models."""
    from . import async_create_client  # noqa: PLC0415 - avoid an import cycle

    try:
        url = URL(data[CONF_BASE_URL])
        valid = url.scheme in ("http", "https") and bool(url.host)
    except ValueError:
        valid = False
    if not valid:
        raise ServerCheckError("invalid_url")
    try:
        client = await async_create_client(hass, data)
    except (ValueError, httpx.InvalidURL, httpx2.InvalidURL) as err:
        # What yarl accepts, the SDK's URL parser may still refuse.
        raise ServerCheckError("invalid_url") from err
    return await async_list_models(client)
