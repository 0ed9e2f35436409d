"""A loopback HTTPS server with a self-signed certificate made on the spot
(with `cryptography`, which Home Assistant ships): a LAN device's setup.

It runs on an event loop of its own, in a thread: a client that refuses the
certificate resets the handshake, which its loop reports (and ignores) instead
of Home Assistant's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
import datetime
import ipaddress
from pathlib import Path
import ssl
import threading
from types import TracebackType
from typing import Any

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .servers import ToolEndpoint


def self_signed_context(directory: Path) -> ssl.SSLContext:
    """A server TLS context for 127.0.0.1 with a fresh self-signed certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lan-device.local")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file = directory / "device.crt"
    key_file = directory / "device.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return context


@dataclass
class HttpsToolEndpoint(ToolEndpoint):
    """`ToolEndpoint` over HTTPS with a self-signed certificate."""

    ssl_context: ssl.SSLContext | None = None

    @property
    def url(self) -> str:
        """`https://127.0.0.1:<port>`."""
        return f"https://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Listen with TLS."""
        app = web.Application(middlewares=self.middlewares())
        self.routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, "127.0.0.1", self.port, ssl_context=self.ssl_context
        )
        await site.start()
        self.port = self._runner.addresses[0][1]


class LanDevice:
    """`async with LanDevice(context) as endpoint:` serves HTTPS from a thread."""

    def __init__(self, context: ssl.SSLContext) -> None:
        """Prepare the loop and the server."""
        self.endpoint = HttpsToolEndpoint(ssl_context=context)
        self._loop = asyncio.new_event_loop()
        # Handshakes the client aborts are expected here.
        self._loop.set_exception_handler(lambda loop, context: None)
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    async def _in_thread(self, coro: Coroutine[Any, Any, None]) -> None:
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    async def __aenter__(self) -> HttpsToolEndpoint:
        """Start the thread and the server."""
        self._thread.start()
        await self._in_thread(self.endpoint.start())
        return self.endpoint

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop the server, the loop and the thread."""
        await self._in_thread(self.endpoint.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
