"""Which redirects a request to the model endpoint follows: a 307 or 308 on its origin.

RFC 9110 (15.4.8, 15.4.9): a 307 or 308 asks for the same request, its method and
content unchanged, at another URI. When that URI keeps the endpoint's origin (scheme,
host and port), Lantern repeats the request there, the key and the `headers` setting
with it, at most `MAX_HOPS` times (the SDK's client: `http.SameOriginRedirects`; a
model list: `endpoint.NO_REDIRECTS`). Every other redirect is answered to the caller,
which explains it (`classify.py`): a 301, 302 or 303 would turn the POST into a GET
without its body, and another origin must never receive the key or the headers.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

MAX_HOPS = 5
_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None] | None:
    """A URL's origin: scheme, host and port (the scheme's default when none is written);
    None when it cannot be read (a port that is no number)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        return None
    return scheme, (parts.hostname or "").lower(), port or _PORTS.get(scheme)


def same_origin(url: str, other: str) -> bool:
    mine = _origin(url)
    return mine is not None and mine == _origin(other)


def followed(url: str, status: int, location: str | None) -> str | None:
    """Where a request to `url` answered `status` with `location` goes next: the absolute
    URL of a 307 or 308 on the same origin, else None (not followed)."""
    if status not in (307, 308) or not location:
        return None
    target = urljoin(url, location)
    return target if same_origin(url, target) else None
