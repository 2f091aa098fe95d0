"""What a per-address limit counts: the client's network, not its address.

One host is given a whole IPv6 /64 (a home's router, a phone, a cloud machine), so counting full
addresses let one attacker be 2^64 clients: 10,000 rooms in 47 s, room codes looked up 370 times
a second, each from an address never seen before. So every per-address limit (app/processes/limits.py,
app/processes/quotas.py) keys on ``limit_key``: the /64 (``LIMIT_IPV6_PREFIX``) of an IPv6
address, the ``LIMIT_IPV4_PREFIX`` of an IPv4 one (32 by default: a NAT's many users are
already one address). An IPv4-mapped IPv6 address (a dual-stack socket's ``::ffff:a.b.c.d``) is
the IPv4 address it maps, so it cannot be a second name for the same client.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import lru_cache, partial

from app.core.settings import Settings


@lru_cache(maxsize=8192)  # (every socket asks three or four times; a network's key never changes)
def limit_key(address: str, ipv4_prefix: int = 32, ipv6_prefix: int = 64) -> str:
    """The key of ``address``'s limits: its network as ``a.b.c.0/24`` or ``2001:db8:1:2::/64``,
    a lone address (a full prefix) as itself in its canonical form, and anything that is no
    address (``?``, a name a proxy sent) as the raw string."""
    text = address.strip()
    if text.startswith("[") and text.endswith("]"):  # (how URLs and some proxies write IPv6)
        text = text[1:-1]
    text = text.partition("%")[0]  # a zone (fe80::1%eth0) names an interface, not a client
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(text)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = ipv4_prefix if ip.version == 4 else ipv6_prefix
    bits = ip.max_prefixlen
    if prefix >= bits:
        return str(ip)
    # (masked as an integer: ipaddress.ip_network takes ~20 us, this ~2)
    network = type(ip)(int(ip) >> (bits - prefix) << (bits - prefix))
    return f"{network}/{prefix}"


def network_key(settings: Settings) -> Callable[[str], str]:
    """``limit_key`` with the prefixes ``settings`` gives."""
    return partial(limit_key, ipv4_prefix=settings.limit_ipv4_prefix, ipv6_prefix=settings.limit_ipv6_prefix)
