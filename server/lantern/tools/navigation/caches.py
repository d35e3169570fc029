"""One parse cache per conversation, for the few conversations in use.

A conversation's navigation calls share one `ParseCache` (keyed by file identity, capped
in bytes), so a second `find_symbol` over the same files parses nothing again. A server
holds many conversations; only the `MAX_CONVERSATIONS` used most recently keep a cache,
each capped at an equal share of `DEFAULT_CAP`, so the caches together stay within that
one cap whatever the number of conversations.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from lantern.code.cache import DEFAULT_CAP, ParseCache

MAX_CONVERSATIONS = 4


class ConversationCaches:
    """The parse caches of the most recently used conversations."""

    def __init__(self, most: int = MAX_CONVERSATIONS, cap_bytes: int = DEFAULT_CAP) -> None:
        self._most = most
        self._share = cap_bytes // most  # each conversation's cap
        self._caches: OrderedDict[str, ParseCache] = OrderedDict()
        self._lock = threading.Lock()

    def for_conversation(self, conversation_id: str) -> ParseCache:
        with self._lock:
            cache = self._caches.get(conversation_id)
            if cache is None:
                cache = self._caches[conversation_id] = ParseCache(self._share)
                while len(self._caches) > self._most:
                    self._caches.popitem(last=False)
            else:
                self._caches.move_to_end(conversation_id)
            return cache

    def forget(self, conversation_id: str) -> None:
        with self._lock:
            self._caches.pop(conversation_id, None)


#: The process's pool: the agent loop takes each conversation's cache from here.
CACHES = ConversationCaches()


def cache_for(code_cache: ParseCache | None) -> ParseCache:
    """The conversation's cache, or one for this call alone (`lantern tool`). (An empty
    cache is falsy: it has a length.)"""
    return code_cache if code_cache is not None else ParseCache()
