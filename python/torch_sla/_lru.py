"""Trimming of the small LRU caches (patterns, solvers): OrderedDict key -> list of items,
least recently used key first."""


def trim(cache, limit):
    """Drops the oldest items until at most `limit` (≥ 0) remain in all lists together."""
    total = sum(len(v) for v in cache.values())
    while total > max(limit, 0):
        key, items = next(iter(cache.items()))
        items.pop(0)
        total -= 1
        if not items:
            del cache[key]
