"""Where friends can open this server: the addresses of the host's network interfaces when it
listens on all of them, else the one it listens on."""

from __future__ import annotations

import ipaddress

import psutil

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}
ALL_INTERFACES = {"0.0.0.0", "::", ""}


def _url(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{port}"


def interface_addresses() -> list[str]:
    """The host's own IPv4 addresses other than loopback and link-local, private ones first
    (a home network's 192.168.x.y is what a phone on the same Wi-Fi reaches)."""
    found: list[ipaddress.IPv4Address] = []
    for entries in psutil.net_if_addrs().values():
        for entry in entries:
            if entry.family.name != "AF_INET":
                continue
            try:
                address = ipaddress.IPv4Address(entry.address)
            except ValueError:
                continue
            if not (address.is_loopback or address.is_link_local) and address not in found:
                found.append(address)
    return [str(a) for a in sorted(found, key=lambda a: (not a.is_private, a))]


def reachable_urls(host: str, port: int, public_url: str | None = None) -> list[str]:
    """The base URLs others can open (``public_url`` alone when the operator names one); none
    when the server listens on this computer only."""
    if public_url:
        return [public_url.rstrip("/")]
    if host in LOOPBACK_HOSTS:
        return []
    if host in ALL_INTERFACES:
        return [_url(address, port) for address in interface_addresses()]
    return [_url(host, port)]
