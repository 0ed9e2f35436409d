"""Application credentials: the client id and secret a sign-in uses.

Each credential added for HTTP Tools Agent is offered when signing in to a
service; the service's URLs come with the sign-in (`tools/sign_in.py` says
why they cannot come from here).
"""

from __future__ import annotations

from homeassistant.components.application_credentials import ClientCredential
from homeassistant.core import HomeAssistant
from homeassistant.helpers.config_entry_oauth2_flow import (
    AbstractOAuth2Implementation,
)

from .tools.sign_in import Credential


async def async_get_auth_implementation(
    hass: HomeAssistant, auth_domain: str, credential: ClientCredential
) -> AbstractOAuth2Implementation:
    """The credential, to be paired with a sign-in's service."""
    return Credential(hass, auth_domain, credential)


async def async_get_description_placeholders(hass: HomeAssistant) -> dict[str, str]:
    """The redirect URI to register at the service."""
    return {"redirect_uri": "https://my.home-assistant.io/redirect/oauth"}
