"""A curl command as a tool draft (`engine/curl/`): the services' published
examples and a browser's "Copy as cURL" become the tools a user would write,
their keys secrets; the real curl and the drafted tool send the same request
to a server on loopback; a command that cannot be a tool says why."""

from __future__ import annotations

import re
from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.curl.command import (
    CurlError,
    CurlProblem,
    read_command,
)
from custom_components.http_tools_agent.engine.curl.draft import draft_tool
from custom_components.http_tools_agent.engine.definitions import (
    check_secrets,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import run_tool

from .conftest import RecordingServer
from .curl_cases import CASES, CurlCase, assert_same_request, pointed_at, run_curl


def _strings(node: Any) -> list[str]:
    """Every string value of a definition (not the keys)."""
    if isinstance(node, dict):
        return [s for value in node.values() for s in _strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return [node] if isinstance(node, str) else []


def _id(case: CurlCase) -> str:
    return f"{case.service}-{CASES.index(case)}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_published_commands_become_the_tools_a_user_would_write(
    case: CurlCase,
) -> None:
    """Verb, URL, headers, body and auth as the docs send them; keys taken
    out as secrets named after the tool; placeholders for the values a user
    changes, each a parameter with the command's value as its example."""
    draft = draft_tool(read_command(case.command))
    assert draft.definition == case.tool
    assert draft.secrets == case.secrets
    assert tuple(draft.stand_ins) == case.stand_ins
    assert tuple(draft.notes) == case.notes
    # Valid as it is, its secrets all supplied, none of their values in it.
    definition = parse_tools([draft.definition])[0]
    check_secrets([definition], draft.secrets)
    assert definition.secret_names == set(draft.secrets)
    texts = re.sub(r"\{secret:\w+\}", "", " ".join(_strings(draft.definition)))
    assert not [v for v in draft.secrets.values() if v in texts]


def test_at_least_ten_services_and_two_browsers() -> None:
    """The published examples cover ten services of docs/services.md or more,
    and both browsers' copies."""
    services = {case.service for case in CASES} - {"chrome", "firefox"}
    assert len(services) >= 10
    assert {"chrome", "firefox"} <= {case.service for case in CASES}


@pytest.mark.parametrize("case", [c for c in CASES if not c.stand_ins], ids=_id)
async def test_the_tool_sends_what_curl_sends(
    case: CurlCase, server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """bash runs the real curl against a server on loopback; the drafted
    tool, called with its examples and its secrets, sends the same verb,
    path, query, headers and body."""
    command = pointed_at(case.command, server.base)
    await run_curl(command)
    read = read_command(command)
    draft = draft_tool(read)
    result = await run_tool(
        session,
        parse_tools([draft.definition])[0],
        draft.examples(),
        secrets=draft.secrets,
    )
    assert result.ok, result.text
    by_curl, by_tool = server.requests
    assert_same_request(by_curl, by_tool, read, draft)


@pytest.mark.parametrize(
    ("command", "problem", "detail"),
    [
        ("echo hello", CurlProblem.NOT_CURL, "the text must start with 'curl'"),
        ("", CurlProblem.NOT_CURL, "the text must start with 'curl'"),
        (
            "curl -sSL -H 'Authorization: Bearer s3cr3t-value'",
            CurlProblem.NO_URL,
            "no URL in the command",
        ),
        (
            "curl -d 'name=milk http://x.example/items",
            CurlProblem.QUOTING,
            "a ' quote is not closed",
        ),
        (
            'curl -H "X-Key: s3cr3t-value http://x.example/',
            CurlProblem.QUOTING,
            'a " quote is not closed',
        ),
        (
            "curl http://a.example/ http://b.example/",
            CurlProblem.TWO_URLS,
            "2 URLs: a tool makes one request",
        ),
        (
            "curl ftp://files.example/readme.txt",
            CurlProblem.BAD_URL,
            "the URL must be http or https with a host, not 'ftp://'",
        ),
        (
            "curl 'http://[::1/x' -u admin:s3cr3t-value",
            CurlProblem.BAD_URL,
            "the URL's host or port is not valid",
        ),
        (
            "curl http://x.example:80a/",
            CurlProblem.BAD_URL,
            "the URL's host or port is not valid",
        ),
        (
            "curl -u admin:s3cr3t-value -d @body.json http://x.example/",
            CurlProblem.READS_FILE,
            "'-d' reads the file 'body.json'",
        ),
        (
            "curl -F 'photo=@cat.jpg' http://x.example/upload",
            CurlProblem.READS_FILE,
            "'-F' reads the file 'cat.jpg'",
        ),
        (
            "curl -T notes.txt http://x.example/",
            CurlProblem.READS_FILE,
            "'-T' reads the file 'notes.txt'",
        ),
        (
            "curl http://x.example/ -H",
            CurlProblem.NO_VALUE,
            "'-H' has no value",
        ),
    ],
)
def test_what_cannot_be_a_tool_says_why(
    command: str, problem: CurlProblem, detail: str
) -> None:
    """The problem as a type (the form's error key) and where, never a value
    of the command (it may be a key)."""
    with pytest.raises(CurlError) as caught:
        read_command(command)
    assert caught.value.problem is problem
    assert caught.value.detail == detail
    assert "s3cr3t" not in str(caught.value)


@pytest.mark.parametrize(
    ("command", "method", "url", "body", "headers"),
    [
        # A prompt copied with the command; a pipe to jq; -s left out.
        (
            "$ curl -s https://x.example/a | jq .",
            "GET",
            "https://x.example/a",
            None,
            [],
        ),
        # Combined short flags and a glued value, as curl reads them.
        (
            "curl -sXPUT -HX-Room:kitchen x.example/light",
            "PUT",
            "http://x.example/light",
            None,
            [("X-Room", "kitchen")],
        ),
        # bash's ANSI-C quote: \n, \', \u and \x escapes.
        (
            r"curl x.example --data-raw $'line\none \'q\' \u00e9\x21'",
            "POST",
            "http://x.example",
            "line\none 'q' é!",
            [],
        ),
        # A backslash outside quotes, octal and a bare \x, a comment.
        (
            r"curl x.example -d a\ b --data-raw $'\101\x' # -H 'X-No: 1'",
            "POST",
            "http://x.example",
            "a b&A\\x",
            [],
        ),
        # Double quotes keep \\ and \" escapes; line continuations.
        (
            'curl "x.example/a" \\\n  -d "say \\"hi\\" \\\\o/"',
            "POST",
            "http://x.example/a",
            'say "hi" \\o/',
            [],
        ),
        # -G moves the data, urlencoded, to the query.
        (
            "curl -G x.example/search --data-urlencode 'q=car insurance' -d page=2",
            "GET",
            "http://x.example/search?q=car%20insurance&page=2",
            None,
            [],
        ),
        # --json: the body and both JSON headers; several -d joined by &.
        (
            "curl --json '{\"a\": 1}' --url http://x.example/j",
            "POST",
            "http://x.example/j",
            '{"a": 1}',
            [("Content-Type", "application/json"), ("Accept", "application/json")],
        ),
        (
            "curl -d a=1 -d b=2 -b 'sid=abc' -A 'bot/1' -e http://r.example/ "
            "http://x.example/f",
            "POST",
            "http://x.example/f",
            "a=1&b=2",
            [
                ("Cookie", "sid=abc"),
                ("User-Agent", "bot/1"),
                ("Referer", "http://r.example/"),
            ],
        ),
        # -I is HEAD; -X wins over the data's POST.
        ("curl -I http://x.example/", "HEAD", "http://x.example/", None, []),
        (
            "curl -X delete -d x=1 http://x.example/i/3",
            "DELETE",
            "http://x.example/i/3",
            "x=1",
            [],
        ),
    ],
)
def test_the_shell_and_curl_read_as_they_do(
    command: str,
    method: str,
    url: str,
    body: str | None,
    headers: list[tuple[str, str]],
) -> None:
    """Quoting, continuations and options mean what bash and curl make of
    them."""
    read = read_command(command)
    assert (read.method, read.url, read.body, read.headers) == (
        method,
        url,
        body,
        headers,
    )


def test_what_is_left_out_is_named() -> None:
    """Options that change only curl's own behaviour, and a second command,
    are named (never shown: a second command may hold a key); -k and -m
    become the tool's TLS check and timeout."""
    read = read_command(
        "curl -sSL -k -m 20 --compressed -o out.json x.example/a; "
        "curl -H 'Authorization: Bearer s3cr3t' x.example/b"
    )
    draft = draft_tool(read)
    assert draft.notes == [
        "left out: -s -S -L --compressed -o out.json what follows ';'"
    ]
    assert draft.definition["verify_ssl"] is False
    assert draft.definition["timeout"] == 20
    assert "s3cr3t" not in repr(draft)


@pytest.mark.parametrize(
    ("command", "auth", "secrets"),
    [
        # Stripe's way: the key as the user, no password.
        (
            "curl https://api.stripe.com/v1/charges -u sk_test_4eC39HqLyjWDarjtT1zdp7dc:",
            {"type": "basic", "username": "{secret:charges_key}", "password": ""},
            {"charges_key": "sk_test_4eC39HqLyjWDarjtT1zdp7dc"},
        ),
        # A browser's copy of a page behind basic auth: the header decoded.
        (
            "curl http://x.example/status -H 'Authorization: Basic YWRtaW46aHVudGVyMg=='",
            {
                "type": "basic",
                "username": "admin",
                "password": "{secret:status_password}",
            },
            {"status_password": "hunter2"},
        ),
        # The credentials written in the URL.
        (
            "curl http://admin:hunter2@x.example/status",
            {
                "type": "basic",
                "username": "admin",
                "password": "{secret:status_password}",
            },
            {"status_password": "hunter2"},
        ),
    ],
)
def test_credentials_become_auth_with_a_secret(
    command: str, auth: dict[str, str], secrets: dict[str, str]
) -> None:
    """However curl is given the credentials, the tool holds a secret."""
    draft = draft_tool(read_command(command))
    assert draft.definition["auth"] == auth
    assert draft.secrets == secrets
    assert "hunter2" not in draft.definition["url"]


def test_secrets_reuse_an_equal_one_and_never_overwrite() -> None:
    """A key the entry already holds is reused; a name taken by another
    value gets a number; a tool name taken gets one too."""
    command = read_command(
        "curl -H 'X-Api-Key: k-123' 'http://x.example/cal?token=t-456'"
    )
    draft = draft_tool(
        command,
        name="cal",
        secrets={"sonarr": "k-123", "cal_token": "other"},
        taken=["cal"],
    )
    assert draft.definition["name"] == "cal_2"
    assert draft.definition["headers"] == {"X-Api-Key": "{secret:sonarr}"}
    assert draft.definition["url"] == "http://x.example/cal?token={secret:cal_2_token}"
    assert draft.secrets == {"cal_2_token": "t-456"}


def test_stand_ins_become_arguments_and_braces_stay_literal() -> None:
    """The docs' `{city}`, `<part>` and `:id` are arguments; other braces in
    fixed text are written so they stay literal."""
    draft = draft_tool(
        read_command(
            "curl -X PATCH 'http://x.example/items/:id/<part>?q={city}&fields=a,b#{ top }' "
            "-H 'Content-Type: application/json' "
            '-d \'{"note": {"tags": ["{x}"], "on": true}}\''
        )
    )
    tool = draft.definition
    # A brace of the URL's own text is sent encoded, as the request would.
    assert tool["url"] == (
        "http://x.example/items/{id}/{part}?q={city}&fields=a,b#%7B top %7D"
    )
    assert tool["body"] == {"note": {"tags": ["{{x}}"], "on": True}}
    assert list(tool["parameters"]["properties"]) == ["id", "part", "city"]
    assert draft.examples() == {}
    parse_tools([tool])


def test_a_big_body_keeps_its_values_past_ten_arguments() -> None:
    """At most ten arguments: a browser's big form keeps the rest as written."""
    fields = "&".join(f"f{i}=v{i}" for i in range(14))
    draft = draft_tool(read_command(f"curl -d '{fields}' http://x.example/save"))
    body: dict[str, Any] = draft.definition["body"]
    assert len(draft.definition["parameters"]["properties"]) == 10
    assert body["f13"] == "v13"
    assert draft.notes == ["more than 10 values: kept as written: f10, f11, f12, f13"]
