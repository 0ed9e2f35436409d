"""What an AI task asks of the model and reads from its answer.

- the `structure` as a JSON schema at the end of the system prompt (the
  structure's selectors serialised the way core's integrations do);
- the answer read as JSON (a code fence or words around one object are
  tolerated: small models write them) and checked against the structure
  (its selectors validate and coerce); what did not match, in words the
  model reads when it is asked again (`StructureMismatch`);
- image attachments as data URLs for image parts (other files are refused
  by name: an OpenAI-compatible chat request carries only images).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
import json
from pathlib import Path
import re
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
import probatio

from .const import DOMAIN

_FENCE = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


class StructureMismatch(Exception):
    """The answer is no JSON matching the task's structure (the message
    says what did not match)."""


def structure_schema(
    structure: probatio.Schema, llm_api: llm.APIInstance | None
) -> dict[str, Any]:
    """The structure as a JSON schema."""
    schema: dict[str, Any] = probatio.to_openapi(
        structure,
        custom_serializer=(
            llm_api.custom_serializer
            if llm_api is not None and llm_api.custom_serializer is not None
            else llm.selector_serializer
        ),
        openapi_version="3.1.0",
    )
    return schema


def structure_prompt(
    structure: probatio.Schema, llm_api: llm.APIInstance | None
) -> str:
    """The instruction that ends the prompt of a structured task."""
    schema = json.dumps(structure_schema(structure, llm_api), ensure_ascii=False)
    return (
        "When you answer, answer with only one JSON object that matches this "
        f"JSON schema, and no other text: {schema}"
    )


def _json_text(text: str) -> str:
    """The JSON of an answer: inside its code fence, or its one object."""
    text = text.strip()
    if fence := _FENCE.match(text):
        return fence.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if not text.startswith("{") and 0 <= start < end:
        return text[start : end + 1]
    return text


def read_structured(text: str, structure: probatio.Schema) -> Any:
    """The answer's data, validated (and coerced) by the structure."""
    if not text.strip():
        raise StructureMismatch("the answer was empty")
    try:
        data = json.loads(_json_text(text))
    except json.JSONDecodeError as err:
        raise StructureMismatch(f"the answer is not valid JSON ({err.msg})") from err
    try:
        return structure(data)
    except probatio.Invalid as err:
        raise StructureMismatch(str(err)) from err


def mismatch_note(err: StructureMismatch) -> str:
    """What the model is told when its answer did not match."""
    return (
        f"That answer does not match the requested structure: {err}. Answer "
        "again with only the JSON object."
    )


def _data_url(path: Path, mime_type: str) -> str:
    return f"data:{mime_type};base64,{base64.b64encode(path.read_bytes()).decode()}"


async def async_images(
    hass: HomeAssistant, attachments: Iterable[conversation.Attachment]
) -> tuple[str, ...]:
    """The attachments as data URLs of images; any other file is refused."""
    attachments = list(attachments)
    for attachment in attachments:
        if not attachment.mime_type.startswith("image/"):
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="task_attachment_not_image",
                translation_placeholders={
                    "name": attachment.path.name,
                    "mime_type": attachment.mime_type,
                },
            )
    return tuple(
        [
            await hass.async_add_executor_job(_data_url, a.path, a.mime_type)
            for a in attachments
        ]
    )
