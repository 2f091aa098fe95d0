"""Where friends can open this server: the addresses of the host's network interfaces when it
listens on all of them, else the one it listens on; and the names it answers to (``HostAllowList``)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

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


# -- the names this server answers to (DNS rebinding) --------------------------------------------


def _bare_host(value: str) -> str:
    """A Host header's (or a URL's) host without its port, lower case, with no trailing dot."""
    value = value.strip().lower()
    if value.startswith("["):  # [v6] or [v6]:port
        value = value[1:].partition("]")[0]
    elif value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


class HostAllowList:
    """The Host names a request may carry: a web page can reach a server bound to loopback
    through a name of the attacker's that resolves to 127.0.0.1 (DNS rebinding), and only the
    Host header tells the server which name the browser used. Allowed: ``localhost`` (and
    ``*.localhost``, which browsers resolve to loopback themselves), the listen host, the
    machine's hostname and ``hostname.local``, ``PUBLIC_URL``'s host and ``ALLOWED_HOSTS``
    (``*.name``: its subdomains; ``*``: any host, the check off), and any address literal: a
    page that reached the server by an address is of that address's origin, so no rebinding
    happens through one, and a NAT's public address or a container's port forwarded to the
    server keep working. A port is not looked at. A request without a Host header is no
    browser's and passes."""

    def __init__(self, listen_host: str, public_url: str | None, allowed: list[str]) -> None:
        entries = {_bare_host(entry) for entry in allowed if entry.strip()}
        self.any = "*" in entries
        self.suffixes = tuple(entry[1:] for entry in entries if entry.startswith("*."))
        self.names = {entry for entry in entries if not entry.startswith("*")}
        self.names |= {"localhost", _bare_host(listen_host)} - {""}
        hostname = socket.gethostname().lower().rstrip(".")
        if hostname:
            short = hostname.partition(".")[0]
            self.names |= {hostname, short, f"{short}.local"}
        if public_url:
            self.names.add(_bare_host(urlsplit(public_url).netloc.rpartition("@")[2]))

    def allows(self, host_header: str | None) -> bool:
        if self.any or host_header is None:
            return True
        host = _bare_host(host_header)
        if host in self.names or host.endswith(".localhost") or any(map(host.endswith, self.suffixes)):
            return True
        try:
            ipaddress.ip_address(host.partition("%")[0])
        except ValueError:
            return False
        return True
