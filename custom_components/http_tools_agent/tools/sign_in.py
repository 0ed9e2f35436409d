"""Sign-ins: OAuth2 accounts whose access tokens tools send.

A tool's ``auth: {"type": "oauth2", "sign_in": "spotify"}`` names a
sign-in; a sign-in is a config entry of this domain of its own kind (its
data: the name, the service's authorize and token URLs, the scopes, the
application credential it signed in with, and the token). Home Assistant's
``OAuth2Session`` keeps the token: refreshed before a call when it is about
to expire and stored back in the entry; a refresh the service refuses starts
re-authentication (the entry's "Sign in again"), and the call answers what
the user must do.

Application credentials hold the client id and secret, one per credential
of this domain. They cannot hold the service's URLs: Home Assistant asks an
integration for one authorization server per domain
(``async_get_authorization_server`` takes no credential), and
``async_get_auth_implementation`` is given only a credential's id, secret
and name. A generic integration serves many services, so each sign-in keeps
its own URLs and pairs them with the credential it picked
(:class:`ServiceOAuth2`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, override

from aiohttp import ClientError
from homeassistant.components.application_credentials import ClientCredential
from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntry, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import (
    OAuth2TokenRequestBaseError,
    OAuth2TokenRequestReauthError,
    UnknownImplementationError,
)
from homeassistant.helpers.config_entry_oauth2_flow import (
    LocalOAuth2Implementation,
    OAuth2Session,
    async_get_implementations,
)
from yarl import URL

from ..const import (
    CONF_AUTHORIZE_URL,
    CONF_SCOPES,
    CONF_SIGN_IN,
    CONF_TOKEN_URL,
    DOMAIN,
    LOGGER,
)
from ..engine.auth import SignInUnavailable, TokenSource

# Where the user finds a sign-in, in the words the model passes on.
_WHERE = "Settings > Devices & services > HTTP Tools Agent"


class Credential(LocalOAuth2Implementation):
    """An application credential of this domain: a client id and secret,
    and no service. A sign-in pairs it with its service's URLs
    (:class:`ServiceOAuth2`); on its own it authorizes nothing."""

    def __init__(
        self, hass: HomeAssistant, auth_domain: str, credential: ClientCredential
    ) -> None:
        super().__init__(
            hass, auth_domain, credential.client_id, credential.client_secret, "", ""
        )
        self._name = credential.name

    @property
    @override
    def name(self) -> str:
        """What the credential was named when it was added."""
        return self._name or self.client_id

    @override
    async def async_generate_authorize_url(self, flow_id: str) -> str:
        """Never reached: the sign-in flow uses :class:`ServiceOAuth2`."""
        raise UnknownImplementationError


class ServiceOAuth2(LocalOAuth2Implementation):
    """A credential's client id and secret at one service's URLs, asking
    for the sign-in's scopes."""

    def __init__(
        self,
        hass: HomeAssistant,
        credential: LocalOAuth2Implementation,
        service: Mapping[str, Any],
    ) -> None:
        super().__init__(
            hass,
            credential.domain,
            credential.client_id,
            credential.client_secret,
            str(service[CONF_AUTHORIZE_URL]),
            str(service[CONF_TOKEN_URL]),
        )
        self._name = credential.name
        self.scopes: list[str] = list(service.get(CONF_SCOPES) or [])

    @property
    @override
    def name(self) -> str:
        """The credential's name."""
        return self._name

    @property
    @override
    def extra_authorize_data(self) -> dict[str, Any]:
        """The scopes, space-separated (RFC 6749 3.3)."""
        return {"scope": " ".join(self.scopes)} if self.scopes else {}

    @override
    async def async_generate_authorize_url(self, flow_id: str) -> str:
        """The authorize URL with its own query kept (Google's
        ``access_type=offline&prompt=consent``, which a refresh token needs):
        the base class replaces the query."""
        generated = URL(await super().async_generate_authorize_url(flow_id))
        own = URL(self.authorize_url).query
        return str(generated.update_query({**own, **generated.query}))


@dataclass(slots=True)
class SignIn:
    """What a loaded sign-in holds: the session that keeps its token."""

    name: str
    session: OAuth2Session


type SignInEntry = ConfigEntry[SignIn]


def is_sign_in(entry: ConfigEntry[Any]) -> bool:
    """Whether an entry of this domain is a sign-in (not a server)."""
    return CONF_SIGN_IN in entry.data


async def async_credential(
    hass: HomeAssistant, auth_domain: str
) -> LocalOAuth2Implementation | None:
    """The application credential a sign-in signed in with (None: removed)."""
    found = (await async_get_implementations(hass, DOMAIN)).get(auth_domain)
    return found if isinstance(found, LocalOAuth2Implementation) else None


async def async_setup_sign_in(hass: HomeAssistant, entry: SignInEntry) -> bool:
    """Load a sign-in: its credential and a token valid now.

    A removed credential or a refresh the service refuses asks the user to
    sign in again (Home Assistant's errors say so: ``ConfigEntryAuthFailed``);
    a service that does not answer is tried again later.
    """
    credential = await async_credential(hass, entry.data["auth_implementation"])
    if credential is None:
        raise UnknownImplementationError
    session = OAuth2Session(hass, entry, ServiceOAuth2(hass, credential, entry.data))
    await session.async_ensure_token_valid()
    entry.runtime_data = SignIn(str(entry.data[CONF_SIGN_IN]), session)
    return True


def _sign_in_entry(hass: HomeAssistant, name: str) -> SignInEntry | None:
    for entry in hass.config_entries.async_entries(DOMAIN, include_disabled=False):
        if is_sign_in(entry) and entry.data[CONF_SIGN_IN] == name:
            return entry
    return None


def _expired(name: str) -> SignInUnavailable:
    return SignInUnavailable(
        f"Error: the sign-in '{name}' has expired. Tell the user to sign in "
        f"again: Home Assistant asks for it in {_WHERE}",
        "sign-in expired",
        sign_in_again=True,
    )


async def async_access_token(hass: HomeAssistant, name: str) -> str:
    """The access token of the sign-in ``name``, refreshed when needed.

    Raises :class:`SignInUnavailable` with what the model passes on: not
    set up, expired (re-authentication started), or not refreshed now.
    """
    entry = _sign_in_entry(hass, name)
    if entry is None:
        raise SignInUnavailable(
            f"Error: there is no sign-in '{name}'. Tell the user to add it in "
            f"Home Assistant: {_WHERE}, Add entry, Sign in to a service",
            "no such sign-in",
            sign_in_again=True,
        )
    if entry.state is not ConfigEntryState.LOADED:
        if any(entry.async_get_active_flows(hass, {SOURCE_REAUTH})):
            raise _expired(name)
        raise SignInUnavailable(
            f"Error: the sign-in '{name}' is not ready: its service did not "
            "answer. Try again later",
            "sign-in not ready",
            sign_in_again=False,
        )
    session = entry.runtime_data.session
    try:
        await session.async_ensure_token_valid()
    except OAuth2TokenRequestReauthError:
        # The session started re-authentication already.
        raise _expired(name) from None
    except (OAuth2TokenRequestBaseError, ClientError, TimeoutError) as err:
        LOGGER.warning("Cannot refresh the sign-in %s: %s", name, type(err).__name__)
        raise SignInUnavailable(
            f"Error: the sign-in '{name}' could not renew its access: its "
            "service did not answer. Try again later",
            "sign-in not refreshed",
            sign_in_again=False,
        ) from None
    return str(session.token["access_token"])


def token_source(hass: HomeAssistant) -> TokenSource:
    """What the engine asks for a sign-in's token."""

    async def access_token(name: str) -> str:
        return await async_access_token(hass, name)

    return access_token
