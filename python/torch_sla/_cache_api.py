"""SOLVER_CACHE: torch-sla's solver-cache handle on torch_sla's refactor cache (_solver.py).

``clear()``, ``stats()`` ({'hits', 'misses', 'size', 'max_size'}: a hit is a cached solver
refactored with new values, a miss a new solver), ``set_max_size(n)`` (n ≥ 1; evicts the least
recently used), ``len()``; ``get_or_build(key, build)`` is torch-sla's generic LRU for a
caller's own set-up objects (kept apart from libsla's solvers, same maximum size)."""
from collections import OrderedDict

from . import _solver
from ._args import as_int


class SolverCache:
    def __init__(self):
        self._user = OrderedDict()

    def clear(self):
        """Drops every cached solver (and get_or_build entries); counters are kept."""
        _solver.clear_solver_cache()
        self._user.clear()

    def stats(self):
        size, max_size = _solver.solver_cache_info()
        return {"hits": _solver.cache_stats["hits"], "misses": _solver.cache_stats["misses"],
                "size": size, "max_size": max_size}

    def set_max_size(self, max_size):
        n = as_int(max_size, "set_max_size: max_size", minimum=1)
        _solver.set_solver_cache_size(n)
        while len(self._user) > n:
            self._user.popitem(last=False)

    def get_or_build(self, key, build):
        if key in self._user:
            self._user.move_to_end(key)
            return self._user[key]
        value = build()
        self._user[key] = value
        while len(self._user) > _solver.solver_cache_info()[1]:
            self._user.popitem(last=False)
        return value

    def __len__(self):
        return _solver.solver_cache_info()[0]

    def __repr__(self):
        s = self.stats()
        return (f"SolverCache(hits={s['hits']}, misses={s['misses']}, "
                f"size={s['size']}/{s['max_size']})")


SOLVER_CACHE = SolverCache()
