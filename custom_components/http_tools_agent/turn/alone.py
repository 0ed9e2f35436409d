"""A tool run alone, with no model to put its result into words: by one of
its sentences, by the yes to a held call, or by the tool editor's *Try it*.

The run is any call's run (`HttpTool.async_run`: argument checks, secrets,
host policy, limits, record and event); what is said of it is a failure's
reason, the tool's own sentence, else the agent's read-out of the result
("Rome: sunny, 16 °C.", after a change "Done: bread (1).").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm

from ..const import DOMAIN
from ..engine.definitions import ToolDefinition
from ..engine.executor import ToolRunResult
from ..engine.speakable import ReadOutWords, speakable
from ..lexicon import LEXICONS
from ..tools.call_result import CallResult
from ..tools.llm_api import HttpTool
from .changes import failure_of
from .say import Said, async_words

if TYPE_CHECKING:
    from ..runtime import HttpToolsRuntime


def read_out_words(language: str | None) -> ReadOutWords:
    """The read-out's words in `language` (English when there are none)."""
    base = (language or "en").split("-")[0].lower()
    return (LEXICONS.get(base) or LEXICONS["en"]).read_out


def said_of_run(
    run: ToolRunResult, definition: ToolDefinition, words: ReadOutWords
) -> Said:
    """What is said of a run: why it failed, the tool's own sentence, else
    its result read out."""
    if not run.ok:
        failure = failure_of(
            conversation.ToolResultContent(
                agent_id=DOMAIN,
                tool_call_id="alone",
                tool_name=definition.name,
                result=CallResult.of_run(run),
            )
        )
        return Said("action_failed", failure=failure)
    if run.speech:
        return Said("tool_result_only", {"result": run.speech})
    text = speakable(run.text, words=words).strip().rstrip(".")
    if definition.read_only:
        return (
            Said("tool_result_only", {"result": f"{text}."})
            if text
            else Said("tool_result_empty")
        )
    return Said("tool_result_done", {"result": f"{text}."}) if text else Said("done")


async def async_run_alone(
    hass: HomeAssistant,
    runtime: HttpToolsRuntime,
    definition: ToolDefinition,
    arguments: dict[str, Any],
    language: str | None,
    *,
    context: Context | None = None,
    device_id: str | None = None,
) -> tuple[ToolRunResult, str]:
    """Run `definition` as any call runs, and return the run and the words
    to say in `language`."""
    tool = HttpTool(definition, runtime)
    llm_context = llm.LLMContext(
        platform=DOMAIN,
        context=context,
        language=language,
        assistant=conversation.DOMAIN,
        device_id=device_id,
    )
    run = await tool.async_run(
        hass, llm.ToolInput(definition.name, arguments), llm_context
    )
    said = said_of_run(run, definition, read_out_words(language))
    return run, await async_words(hass, language, said)
