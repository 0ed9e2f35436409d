"""curl commands as the services of docs/services.md publish them, and two
a browser copies ("Copy as cURL (bash)" in Chrome, "Copy as cURL (POSIX)" in
Firefox), each with the tool draft it must make.

The commands are the docs' own, stand-ins (`TOKEN`, `<apptoken>`,
`{API key}`) included; `source` says where each is published.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from email import message_from_bytes, policy
import json
import os
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from custom_components.http_tools_agent.engine.curl.command import (
    CurlCommand,
    read_command,
)
from custom_components.http_tools_agent.engine.curl.draft import (
    BROWSER_HEADERS,
    CurlDraft,
)
from dev.loopback import Recorded


@dataclass(frozen=True, slots=True)
class CurlCase:
    """A command and what the draft of it must be."""

    service: str
    source: str
    command: str
    tool: dict[str, Any]
    secrets: dict[str, str] = field(default_factory=dict)
    stand_ins: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


CASES: list[CurlCase] = [
    CurlCase(
        service="home assistant",
        source="https://developers.home-assistant.io/docs/api/rest/ (POST /api/services/<domain>/<service>)",
        command=r"""curl \
  -H "Authorization: Bearer TOKEN" \
  -H "Content-Type: application/json" \
  -d '{"entity_id": "switch.christmas_lights"}' \
  http://localhost:8123/api/services/switch/turn_on""",
        tool={
            "name": "turn_on",
            "url": "http://localhost:8123/api/services/switch/turn_on",
            "method": "POST",
            "body": {"entity_id": "{entity_id}"},
            "headers": {"Authorization": "Bearer {secret:turn_on_token}"},
            "parameters": {
                "type": "object",
                "properties": {
                    "entity_id": {
                        "type": "string",
                        "examples": ["switch.christmas_lights"],
                    }
                },
                "required": ["entity_id"],
            },
        },
        secrets={"turn_on_token": "TOKEN"},
    ),
    CurlCase(
        service="home assistant",
        source="https://developers.home-assistant.io/docs/api/rest/ (GET /api/states/<entity_id>)",
        command=r"""curl \
  -H "Authorization: Bearer TOKEN" \
  -H "Content-Type: application/json" \
  http://localhost:8123/api/states/sensor.kitchen_temperature""",
        tool={
            "name": "states",
            "url": "http://localhost:8123/api/states/{entity_id}",
            "method": "GET",
            "headers": {
                "Authorization": "Bearer {secret:states_token}",
                "Content-Type": "application/json",
            },
            "parameters": {
                "type": "object",
                "properties": {
                    "entity_id": {
                        "type": "string",
                        "examples": ["sensor.kitchen_temperature"],
                    }
                },
                "required": ["entity_id"],
            },
        },
        secrets={"states_token": "TOKEN"},
    ),
    CurlCase(
        service="ntfy",
        source="https://docs.ntfy.sh/publish/ (Example: publish a message)",
        command=r"""curl -d "Backup successful 😀" ntfy.sh/mytopic""",
        tool={
            "name": "mytopic",
            "url": "http://ntfy.sh/mytopic",
            "method": "POST",
            "body_format": "text",
            "body": "{text}",
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "examples": ["Backup successful 😀"]}
                },
                "required": ["text"],
            },
        },
    ),
    CurlCase(
        service="ntfy",
        source="https://docs.ntfy.sh/publish/ (Message title, priority and tags)",
        command=r"""curl \
  -H "Title: Unauthorized access detected" \
  -H "Priority: urgent" \
  -H "Tags: warning,skull" \
  -d "Remote access to phils-laptop detected. Act right away." \
  ntfy.sh/phil_alerts""",
        tool={
            "name": "phil_alerts",
            "url": "http://ntfy.sh/phil_alerts",
            "method": "POST",
            "body_format": "text",
            "body": "{text}",
            "headers": {
                "Title": "Unauthorized access detected",
                "Priority": "urgent",
                "Tags": "warning,skull",
            },
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {
                        "type": "string",
                        "examples": [
                            "Remote access to phils-laptop detected. Act right away."
                        ],
                    }
                },
                "required": ["text"],
            },
        },
    ),
    CurlCase(
        service="ntfy",
        source="https://docs.ntfy.sh/publish/#authentication (username and password)",
        command=r"""curl \
  -u phil:mypass \
  -d "Look ma, with auth" \
  https://ntfy.example.com/mysecrets""",
        tool={
            "name": "mysecrets",
            "url": "https://ntfy.example.com/mysecrets",
            "method": "POST",
            "body_format": "text",
            "body": "{text}",
            "auth": {
                "type": "basic",
                "username": "phil",
                "password": "{secret:mysecrets_password}",
            },
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "examples": ["Look ma, with auth"]}
                },
                "required": ["text"],
            },
        },
        secrets={"mysecrets_password": "mypass"},
    ),
    CurlCase(
        service="gotify",
        source="https://gotify.net/docs/pushmsg",
        command=r'''curl "https://push.example.de/message?token=<apptoken>" -F "title=my title" -F "message=my message" -F "priority=5"''',
        tool={
            "name": "message",
            "url": "https://push.example.de/message?token={secret:message_token}",
            "method": "POST",
            "body_format": "form",
            "body": {
                "title": "{title}",
                "message": "{message}",
                "priority": "{priority}",
            },
            "parameters": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "examples": ["my title"]},
                    "message": {"type": "string", "examples": ["my message"]},
                    "priority": {"type": "integer", "examples": [5]},
                },
                "required": ["title", "message", "priority"],
            },
        },
        secrets={"message_token": "<apptoken>"},
        stand_ins=("message_token",),
        notes=(
            "-F sends multipart/form-data; the tool sends the fields as application/x-www-form-urlencoded",
        ),
    ),
    CurlCase(
        service="pushover",
        source="https://pushover.net/api (Example code: command line)",
        command=r"""curl -s \
  --form-string "token=abc123" \
  --form-string "user=user456" \
  --form-string "message=hello world" \
  https://api.pushover.net/1/messages.json""",
        tool={
            "name": "messages",
            "url": "https://api.pushover.net/1/messages.json",
            "method": "POST",
            "body_format": "form",
            "body": {
                "token": "{secret:messages_token}",
                "user": "user456",
                "message": "{message}",
            },
            "parameters": {
                "type": "object",
                "properties": {
                    "message": {"type": "string", "examples": ["hello world"]}
                },
                "required": ["message"],
            },
        },
        secrets={"messages_token": "abc123"},
        notes=(
            "-F sends multipart/form-data; the tool sends the fields as application/x-www-form-urlencoded",
            "left out: -s",
        ),
    ),
    CurlCase(
        service="telegram",
        source="https://core.telegram.org/bots/api (Making requests; the token of the docs' example)",
        command=r"""curl -X POST "https://api.telegram.org/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/sendMessage" \
  -H "Content-Type: application/json" \
  -d '{"chat_id": 123456789, "text": "Dinner is ready"}'""",
        tool={
            "name": "sendmessage",
            "url": "https://api.telegram.org/bot{secret:sendmessage_token}/sendMessage",
            "method": "POST",
            "body": {"chat_id": "{chat_id}", "text": "{text}"},
            "parameters": {
                "type": "object",
                "properties": {
                    "chat_id": {"type": "integer", "examples": [123456789]},
                    "text": {"type": "string", "examples": ["Dinner is ready"]},
                },
                "required": ["chat_id", "text"],
            },
        },
        secrets={"sendmessage_token": "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"},
    ),
    CurlCase(
        service="openweathermap",
        source="https://openweathermap.org/current (API call, the docs' example)",
        command=r'''curl "https://api.openweathermap.org/data/2.5/weather?lat=44.34&lon=10.99&appid={API key}"''',
        tool={
            "name": "weather",
            "url": "https://api.openweathermap.org/data/2.5/weather?lat={lat}&lon={lon}&appid={secret:weather_appid}",
            "method": "GET",
            "parameters": {
                "type": "object",
                "properties": {
                    "lat": {"type": "number", "examples": [44.34]},
                    "lon": {"type": "number", "examples": [10.99]},
                },
                "required": ["lat", "lon"],
            },
        },
        secrets={"weather_appid": "{API key}"},
        stand_ins=("weather_appid",),
    ),
    CurlCase(
        service="open meteo",
        source="https://open-meteo.com/en/docs (API URL of the docs' example)",
        command=r'''curl "https://api.open-meteo.com/v1/forecast?latitude=52.52&longitude=13.41&current=temperature_2m,wind_speed_10m&hourly=temperature_2m,relative_humidity_2m,wind_speed_10m"''',
        tool={
            "name": "forecast",
            "url": "https://api.open-meteo.com/v1/forecast?latitude={latitude}&longitude={longitude}&current=temperature_2m,wind_speed_10m&hourly=temperature_2m,relative_humidity_2m,wind_speed_10m",
            "method": "GET",
            "parameters": {
                "type": "object",
                "properties": {
                    "latitude": {"type": "number", "examples": [52.52]},
                    "longitude": {"type": "number", "examples": [13.41]},
                },
                "required": ["latitude", "longitude"],
            },
        },
    ),
    CurlCase(
        service="philips hue",
        source="https://developers.meethue.com/develop/hue-api-v2/getting-started/ (Controlling a light)",
        command=r"""curl --insecure -X PUT "https://192.168.1.10/clip/v2/resource/light/3f4ac4e9-d67a-4dbd-8a16-5ea7e373f281" \
  -H "hue-application-key: 3OeG6FQEvQRnjmcpQShDjtcS5n8f8ZO9Uh0Gc3dV" \
  -d '{"on": {"on": true}, "dimming": {"brightness": 30}}'""",
        tool={
            "name": "put_light",
            "url": "https://192.168.1.10/clip/v2/resource/light/{light_id}",
            "method": "PUT",
            "body": {"on": {"on": True}, "dimming": {"brightness": "{brightness}"}},
            "headers": {
                "hue-application-key": "{secret:put_light_hue_application_key}"
            },
            "verify_ssl": False,
            "parameters": {
                "type": "object",
                "properties": {
                    "light_id": {
                        "type": "string",
                        "examples": ["3f4ac4e9-d67a-4dbd-8a16-5ea7e373f281"],
                    },
                    "brightness": {"type": "integer", "examples": [30]},
                },
                "required": ["light_id", "brightness"],
            },
        },
        secrets={
            "put_light_hue_application_key": "3OeG6FQEvQRnjmcpQShDjtcS5n8f8ZO9Uh0Gc3dV"
        },
    ),
    CurlCase(
        service="pi hole",
        source="https://docs.pi-hole.net/api/auth/ (Authentication with a password)",
        command=r"""curl -k -X POST "https://pi.hole/api/auth" --data '{"password":"your-password"}'""",
        tool={
            "name": "auth",
            "url": "https://pi.hole/api/auth",
            "method": "POST",
            "body": {"password": "{secret:auth_password}"},
            "verify_ssl": False,
            "parameters": {"type": "object", "properties": {}},
        },
        secrets={"auth_password": "your-password"},
        stand_ins=("auth_password",),
    ),
    CurlCase(
        service="pi hole",
        source="https://docs.pi-hole.net/api/auth/ (Using the session id)",
        command=r'''curl -k -X GET "https://pi.hole/api/stats/summary" -H "X-FTL-SID: vFA+EP4MQ5JJvJg+3Q2Jnw="''',
        tool={
            "name": "summary",
            "url": "https://pi.hole/api/stats/summary",
            "method": "GET",
            "headers": {"X-FTL-SID": "{secret:summary_x_ftl_sid}"},
            "verify_ssl": False,
            "parameters": {"type": "object", "properties": {}},
        },
        secrets={"summary_x_ftl_sid": "vFA+EP4MQ5JJvJg+3Q2Jnw="},
    ),
    CurlCase(
        service="sonarr",
        source="https://sonarr.tv/docs/api/ (X-Api-Key header; GET /api/v3/calendar)",
        command=r'''curl -H "X-Api-Key: 0123456789abcdef0123456789abcdef" "http://localhost:8989/api/v3/calendar?start=2024-05-01&end=2024-05-08"''',
        tool={
            "name": "calendar",
            "url": "http://localhost:8989/api/v3/calendar?start={start}&end={end}",
            "method": "GET",
            "headers": {"X-Api-Key": "{secret:calendar_x_api_key}"},
            "parameters": {
                "type": "object",
                "properties": {
                    "start": {"type": "string", "examples": ["2024-05-01"]},
                    "end": {"type": "string", "examples": ["2024-05-08"]},
                },
                "required": ["start", "end"],
            },
        },
        secrets={"calendar_x_api_key": "0123456789abcdef0123456789abcdef"},
    ),
    CurlCase(
        service="paperless ngx",
        source="https://docs.paperless-ngx.com/api/#authorization (Token authentication)",
        command=r'''curl -H "Authorization: Token <token>" "http://localhost:8000/api/documents/?query=car%20insurance"''',
        tool={
            "name": "documents",
            "url": "http://localhost:8000/api/documents/?query={query}",
            "method": "GET",
            "headers": {"Authorization": "Token {secret:documents_token}"},
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "examples": ["car insurance"]}
                },
                "required": ["query"],
            },
        },
        secrets={"documents_token": "<token>"},
        stand_ins=("documents_token",),
    ),
    CurlCase(
        service="shelly",
        source="https://shelly-api-docs.shelly.cloud/gen2/ComponentsAndServices/Switch (Switch.Set over HTTP GET, digest auth)",
        command=r'''curl --digest -u admin:mypass "http://192.168.33.1/rpc/Switch.Set?id=0&on=false"''',
        tool={
            "name": "switch",
            "url": "http://192.168.33.1/rpc/Switch.Set?id={id}&on={on}",
            "method": "GET",
            "auth": {
                "type": "digest",
                "username": "admin",
                "password": "{secret:switch_password}",
            },
            "parameters": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "examples": [0]},
                    "on": {"type": "string", "examples": ["false"]},
                },
                "required": ["id", "on"],
            },
        },
        secrets={"switch_password": "mypass"},
    ),
    CurlCase(
        service="tasmota",
        source="https://tasmota.github.io/docs/Commands/#with-web-requests",
        command=r'''curl "http://192.168.1.50/cm?user=admin&password=joker&cmnd=Power%20Toggle"''',
        tool={
            "name": "cm",
            "url": "http://192.168.1.50/cm?user=admin&password={secret:cm_password}&cmnd={cmnd}",
            "method": "GET",
            "parameters": {
                "type": "object",
                "properties": {
                    "cmnd": {"type": "string", "examples": ["Power Toggle"]}
                },
                "required": ["cmnd"],
            },
        },
        secrets={"cm_password": "joker"},
    ),
    CurlCase(
        service="adguard home",
        source="https://github.com/AdguardTeam/AdGuardHome/tree/master/openapi (POST /control/protection)",
        command=r"""curl -X POST -u admin:password \
  -H "Content-Type: application/json" \
  -d '{"enabled": false, "duration": 600000}' \
  http://127.0.0.1:3000/control/protection""",
        tool={
            "name": "protection",
            "url": "http://127.0.0.1:3000/control/protection",
            "method": "POST",
            "body": {"enabled": False, "duration": "{duration}"},
            "auth": {
                "type": "basic",
                "username": "admin",
                "password": "{secret:protection_password}",
            },
            "parameters": {
                "type": "object",
                "properties": {"duration": {"type": "integer", "examples": [600000]}},
                "required": ["duration"],
            },
        },
        secrets={"protection_password": "password"},
    ),
    CurlCase(
        service="octoprint",
        source="https://docs.octoprint.org/en/master/api/job.html (Pause the current job)",
        command=r"""curl -H "X-Api-Key: ABCDEF0123456789ABCDEF0123456789" -H "Content-Type: application/json" \
  -X POST -d '{"command": "pause", "action": "pause"}' http://octopi.local/api/job""",
        tool={
            "name": "job",
            "url": "http://octopi.local/api/job",
            "method": "POST",
            "body": {"command": "{command}", "action": "{action}"},
            "headers": {"X-Api-Key": "{secret:job_x_api_key}"},
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "examples": ["pause"]},
                    "action": {"type": "string", "examples": ["pause"]},
                },
                "required": ["command", "action"],
            },
        },
        secrets={"job_x_api_key": "ABCDEF0123456789ABCDEF0123456789"},
    ),
    CurlCase(
        service="immich",
        source="https://immich.app/docs/api/search-asset-metadata (the page's curl sample)",
        command=r"""curl -L 'http://localhost:2283/api/search/metadata' \
-H 'Content-Type: application/json' \
-H 'Accept: application/json' \
-H 'x-api-key: <apiKey>' \
-d '{"city": "Rome", "size": 5}'""",
        tool={
            "name": "metadata",
            "url": "http://localhost:2283/api/search/metadata",
            "method": "POST",
            "body": {"city": "{city}", "size": "{size}"},
            "headers": {
                "Accept": "application/json",
                "x-api-key": "{secret:metadata_x_api_key}",
            },
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "examples": ["Rome"]},
                    "size": {"type": "integer", "examples": [5]},
                },
                "required": ["city", "size"],
            },
        },
        secrets={"metadata_x_api_key": "<apiKey>"},
        stand_ins=("metadata_x_api_key",),
        notes=("left out: -L",),
    ),
    CurlCase(
        service="frigate",
        source="https://docs.frigate.video/integrations/api/events-events-get",
        command=r'''curl "http://frigate.local:5000/api/events?camera=front_door&limit=5&has_snapshot=1"''',
        tool={
            "name": "events",
            "url": "http://frigate.local:5000/api/events?camera={camera}&limit={limit}&has_snapshot={has_snapshot}",
            "method": "GET",
            "parameters": {
                "type": "object",
                "properties": {
                    "camera": {"type": "string", "examples": ["front_door"]},
                    "limit": {"type": "integer", "examples": [5]},
                    "has_snapshot": {"type": "integer", "examples": [1]},
                },
                "required": ["camera", "limit", "has_snapshot"],
            },
        },
    ),
    CurlCase(
        service="chrome",
        source="Chrome 131, DevTools, Network, a request, Copy as cURL (bash): Home Assistant's frontend turning on a light",
        command=r"""curl 'http://homeassistant.local:8123/api/services/light/turn_on' \
  -H 'accept: */*' \
  -H 'accept-language: en-GB,en;q=0.9,it;q=0.8' \
  -H 'authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJhYmMxMjMifQ.c2lnbmF0dXJl' \
  -H 'content-type: application/json' \
  -H 'origin: http://homeassistant.local:8123' \
  -H 'priority: u=1, i' \
  -H 'referer: http://homeassistant.local:8123/lovelace/0' \
  -H 'sec-ch-ua: "Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"' \
  -H 'sec-ch-ua-mobile: ?0' \
  -H 'sec-ch-ua-platform: "Linux"' \
  -H 'sec-fetch-dest: empty' \
  -H 'sec-fetch-mode: cors' \
  -H 'sec-fetch-site: same-origin' \
  -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' \
  --data-raw $'{"entity_id":"light.kitchen","brightness_pct":40,"name":"Giulia\'s lamp \u2013 kitchen"}'""",
        tool={
            "name": "turn_on",
            "url": "http://homeassistant.local:8123/api/services/light/turn_on",
            "method": "POST",
            "body": {
                "entity_id": "{entity_id}",
                "brightness_pct": "{brightness_pct}",
                "name": "{name}",
            },
            "headers": {
                "accept": "*/*",
                "authorization": "Bearer {secret:turn_on_token}",
                "origin": "http://homeassistant.local:8123",
            },
            "parameters": {
                "type": "object",
                "properties": {
                    "entity_id": {"type": "string", "examples": ["light.kitchen"]},
                    "brightness_pct": {"type": "integer", "examples": [40]},
                    "name": {
                        "type": "string",
                        "examples": ["Giulia's lamp \u2013 kitchen"],
                    },
                },
                "required": ["entity_id", "brightness_pct", "name"],
            },
        },
        secrets={
            "turn_on_token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJhYmMxMjMifQ.c2lnbmF0dXJl"
        },
        notes=(
            "headers left out (a browser's own): accept-language, priority, referer, sec-ch-ua, sec-ch-ua-mobile, sec-ch-ua-platform, sec-fetch-dest, sec-fetch-mode, sec-fetch-site, user-agent",
        ),
    ),
    CurlCase(
        service="firefox",
        source="Firefox 133, Network, a request, Copy Value, Copy as cURL (POSIX): a search on a Paperless-ngx server logged in with its session cookie",
        command=r"""curl 'http://paperless.local:8000/api/documents/?page=1&page_size=25&query=insurance' -H 'User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' -H 'Accept: application/json; version=5' -H 'Accept-Language: en-US,en;q=0.5' -H 'Accept-Encoding: gzip, deflate' -H 'X-CSRFToken: kq8Lw9Hn3xVb2Tt7Yp4Zr6Mc1Ds5Fg0J' -H 'Connection: keep-alive' -H 'Referer: http://paperless.local:8000/documents?query=insurance' -H 'Cookie: csrftoken=kq8Lw9Hn3xVb2Tt7Yp4Zr6Mc1Ds5Fg0J; sessionid=8x1c9y2b7n3m4q5w6e7r8t9y0u1i2o3p' -H 'Sec-Fetch-Dest: empty' -H 'Sec-Fetch-Mode: cors' -H 'Sec-Fetch-Site: same-origin' -H 'Priority: u=0'""",
        tool={
            "name": "documents",
            "url": "http://paperless.local:8000/api/documents/?page={page}&page_size={page_size}&query={query}",
            "method": "GET",
            "headers": {
                "Accept": "application/json; version=5",
                "X-CSRFToken": "{secret:documents_x_csrftoken}",
                "Cookie": "{secret:documents_cookie}",
            },
            "parameters": {
                "type": "object",
                "properties": {
                    "page": {"type": "integer", "examples": [1]},
                    "page_size": {"type": "integer", "examples": [25]},
                    "query": {"type": "string", "examples": ["insurance"]},
                },
                "required": ["page", "page_size", "query"],
            },
        },
        secrets={
            "documents_x_csrftoken": "kq8Lw9Hn3xVb2Tt7Yp4Zr6Mc1Ds5Fg0J",
            "documents_cookie": "csrftoken=kq8Lw9Hn3xVb2Tt7Yp4Zr6Mc1Ds5Fg0J; sessionid=8x1c9y2b7n3m4q5w6e7r8t9y0u1i2o3p",
        },
        notes=(
            "headers left out (a browser's own): user-agent, accept-language, accept-encoding, connection, referer, sec-fetch-dest, sec-fetch-mode, sec-fetch-site, priority",
        ),
    ),
]


def pointed_at(command: str, base: str) -> str:
    """`command` with its server replaced by `base` (`http://127.0.0.1:port`)."""
    parts = urlsplit(read_command(command).url)
    local = urlsplit(base).netloc
    for written in (f"{parts.scheme}://{parts.netloc}", parts.netloc):
        command = command.replace(written, base if "://" in written else local)
    return command


async def run_curl(command: str) -> None:
    """Run `command` in bash, with the real curl, as a user would."""
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        f"{command} -s -o /dev/null --max-time 10",
        # Bash writes $'\u2013' as UTF-8 only in a UTF-8 locale.
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )
    assert await process.wait() == 0


def _fields(request: Recorded) -> list[tuple[str, str]]:
    """A request's form fields, urlencoded or multipart."""
    content_type = request.headers.get("Content-Type", "")
    if content_type.startswith("multipart/form-data"):
        head = f"Content-Type: {content_type}\r\n\r\n".encode()
        message = message_from_bytes(head + request.body, policy=policy.HTTP)
        return [
            (
                str(part.get_param("name", header="content-disposition")),
                part.get_content(),
            )
            for part in message.iter_parts()
        ]
    return parse_qsl(request.body.decode(), keep_blank_values=True)


def assert_same_request(
    by_curl: Recorded, by_tool: Recorded, command: CurlCommand, draft: CurlDraft
) -> None:
    """What curl sent and what the tool sent are the same request: verb,
    path, query, the command's own headers (secrets filled), the body."""
    assert by_tool.method == by_curl.method
    assert unquote(by_tool.path) == unquote(by_curl.path)
    assert parse_qsl(by_tool.query, keep_blank_values=True) == parse_qsl(
        by_curl.query, keep_blank_values=True
    )
    browser = any(n.lower().startswith("sec-fetch-") for n, _ in command.headers)
    own = {
        name.lower()
        for name, _ in command.headers
        if not browser
        or (name.lower() not in BROWSER_HEADERS and not name.lower().startswith("sec-"))
    } - {"content-type"}
    if command.user is not None:
        own.add("authorization")
    for name in sorted(own):
        assert by_tool.headers.get(name) == by_curl.headers.get(name), name
    if "content-type" in {n.lower() for n, _ in command.headers} and not command.form:
        assert (
            by_tool.headers["Content-Type"].split(";")[0]
            == by_curl.headers["Content-Type"].split(";")[0]
        )
    body_format = draft.definition.get("body_format", "json")
    if "body" not in draft.definition:
        assert by_tool.body == by_curl.body == b""
    elif body_format == "json":
        assert json.loads(by_tool.body) == json.loads(by_curl.body)
    elif body_format == "form":
        assert _fields(by_tool) == _fields(by_curl)
    else:
        assert by_tool.body == by_curl.body
