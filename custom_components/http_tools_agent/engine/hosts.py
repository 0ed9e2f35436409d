"""The host policy: which hosts tool requests may reach.

An empty policy allows any host. Otherwise a request goes out only when its
host matches one entry: a host name (case-insensitive, ``example.com``), a
wildcard for the subdomains of a name (``*.example.com``, not the name
itself), an IP address (``192.168.1.20``, ``::1``) or an IP network in CIDR
form (``192.168.1.0/24``). Names are compared as written: a name that
resolves into an allowed network is not allowed by it (no DNS look-ups).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
import ipaddress
import re

type IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# A DNS name: labels of letters, digits and '-', dot-separated.
_NAME_RE = re.compile(
    r"(?=.{1,253}$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)"
    r"(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*"
)


def _normalise_name(name: str) -> str:
    """Lower-case, IDNA-encoded, without a trailing dot."""
    name = name.strip().rstrip(".").lower()
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        return name


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """The hosts tools may reach (empty: any host)."""

    names: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    networks: tuple[IPNetwork, ...] = ()

    @property
    def restricted(self) -> bool:
        """Whether the policy limits the hosts at all."""
        return bool(self.names or self.suffixes or self.networks)

    @classmethod
    def parse(cls, entries: Iterable[str]) -> HostPolicy:
        """Read the entries; raise ``ValueError`` naming the first invalid one."""
        names: set[str] = set()
        suffixes: list[str] = []
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            invalid = ValueError(
                f"'{entry}' is not a host name, '*.name', an IP address or "
                "a CIDR network (no scheme, port or path)"
            )
            if "/" in entry or _ip(entry) is not None:
                try:
                    networks.append(
                        ipaddress.ip_network(entry.strip("[]"), strict=False)
                    )
                except ValueError:
                    raise invalid from None
                continue
            wildcard = entry.startswith("*.")
            name = _normalise_name(entry.removeprefix("*."))
            if ":" in name or not _NAME_RE.fullmatch(name):
                raise invalid
            if wildcard:
                suffixes.append("." + name)
            else:
                names.add(name)
        return cls(frozenset(names), tuple(suffixes), tuple(networks))

    def allows(self, host: str | None) -> bool:
        """Whether a request may go to ``host`` (a URL's host, no port)."""
        if not self.restricted:
            return True
        if not host:
            return False
        address = _ip(host)
        if address is not None:
            return any(address in network for network in self.networks)
        name = _normalise_name(host)
        return name in self.names or any(name.endswith(s) for s in self.suffixes)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None
