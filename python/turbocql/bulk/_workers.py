"""Sessions of worker processes (Dask workers, Spark executors' Python workers): how to
connect, as a picklable :class:`Connection` of plain values, and one session per set of
connection arguments per process, made on first use and shut down when the process exits.

Shared by :mod:`turbocql.dask` and :mod:`turbocql.spark`, whose tasks each need a session
and must not open a cluster per task."""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass, field
from typing import Any

_SESSIONS: dict[Any, Any] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Connection:
    """How workers connect: contact points, port and other ``Cluster`` arguments (picklable:
    plain values only, e.g. ``protocol_version``; credentials as ``username`` /
    ``password``; TLS as ``ssl_options`` pairs, the classic driver's ``ssl_options``)."""

    contact_points: tuple[str, ...]
    port: int = 9042
    username: str | None = None
    password: str | None = None
    local_dc: str | None = None
    cluster_kwargs: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    ssl_options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    def session(self):
        """This process's session for these arguments (made once)."""
        with _LOCK:
            s = _SESSIONS.get(self)
            if s is None or s.is_shutdown:
                s = _SESSIONS[self] = self._connect()
            return s

    def _connect(self):
        from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
        from turbocql.policies import DCAwareRoundRobinPolicy, RoundRobinPolicy, TokenAwarePolicy

        child = DCAwareRoundRobinPolicy(local_dc=self.local_dc) if self.local_dc else RoundRobinPolicy()
        kwargs: dict[str, Any] = dict(self.cluster_kwargs)
        kwargs.setdefault(
            "execution_profiles",
            {EXEC_PROFILE_DEFAULT: ExecutionProfile(load_balancing_policy=TokenAwarePolicy(child))},
        )
        if self.username is not None:
            from turbocql.auth import PlainTextAuthProvider

            kwargs["auth_provider"] = PlainTextAuthProvider(self.username, self.password or "")
        if self.ssl_options:
            kwargs["ssl_options"] = dict(self.ssl_options)
        cluster = Cluster(list(self.contact_points), port=self.port, **kwargs)
        return cluster.connect()


@atexit.register
def _shutdown_sessions() -> None:
    with _LOCK:
        for s in _SESSIONS.values():
            try:
                s.cluster.shutdown()
            except Exception:  # exiting anyway: a failed shutdown changes nothing
                pass
        _SESSIONS.clear()


def connection(contact_points, port, username, password, local_dc, cluster_kwargs, ssl_options=None) -> Connection:
    points = (contact_points,) if isinstance(contact_points, str) else tuple(contact_points)
    return Connection(
        points,
        port,
        username,
        password,
        local_dc,
        tuple(sorted((cluster_kwargs or {}).items())),
        tuple(sorted((ssl_options or {}).items())),
    )
