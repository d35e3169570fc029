"""Which header carries the API key to an endpoint.

Azure OpenAI's deployment URLs (the "classic" surface,
`https://RESOURCE.openai.azure.com/openai/deployments/NAME?api-version=…`, recognised
by that path) take the key in an `api-key` header and answer a bearer token with 401.
Every other endpoint, Azure's `/openai/v1/` surface included, takes
`Authorization: Bearer KEY`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

_DEPLOYMENT = re.compile(r"/openai/deployments/[^/]+/?$")


def azure_deployment(base_url: str) -> bool:
    """Whether `base_url` is an Azure OpenAI deployment URL (the classic surface)."""
    return bool(_DEPLOYMENT.search(urlsplit(base_url).path))


def credentials(
    base_url: str, api_key: str | None, headers: Mapping[str, str]
) -> tuple[str | None, dict[str, str]]:
    """The key to send as a bearer token (None: none) and the headers to send, for a
    request to `base_url`: on a deployment URL the key goes as `api-key` instead (a
    `headers` setting of that name wins), and no bearer token is sent."""
    if api_key is None or not azure_deployment(base_url):
        return api_key, dict(headers)
    if any(name.lower() == "api-key" for name in headers):
        return None, dict(headers)
    return None, {**headers, "api-key": api_key}
