"""Messages the agent speaks itself, in the conversation's language."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import translation

from ..const import DOMAIN


async def async_spoken_message(
    hass: HomeAssistant, language: str | None, key: str, placeholders: dict[str, str]
) -> str:
    """Return the `exceptions` translation `key` in `language` (English fallback)."""
    lookup = f"component.{DOMAIN}.exceptions.{key}.message"
    for lang in dict.fromkeys((language or hass.config.language, "en")):
        strings = await translation.async_get_translations(
            hass, lang, "exceptions", [DOMAIN]
        )
        if template := strings.get(lookup):
            try:
                return template.format(**placeholders)
            except KeyError, IndexError, ValueError:
                return template
    return key


async def async_spoken_error(
    hass: HomeAssistant, language: str | None, err: HomeAssistantError
) -> str:
    """Return a translated error of this integration in `language`."""
    if err.translation_domain == DOMAIN and err.translation_key:
        return await async_spoken_message(
            hass, language, err.translation_key, err.translation_placeholders or {}
        )
    return str(err)
