"""Execution profiles (classic ``cassandra.cluster.ExecutionProfile`` and its manager).

An :class:`ExecutionProfile` names the policies and defaults of the requests run with it.
The engine builds its form of a profile (``_engine.EngineProfile``: the scylla crate's
execution profile with the profile's load-balancing, retry and speculative-execution
policies, and its consistency, timeout and row factory) once, at first use, and again
only after the profile or one of its policies changed (then that profile's engine form
alone is marked stale); requests carry a handle to it. ``turbocql.cluster`` re-exports these names.
"""

import weakref

from turbocql import ConsistencyLevel, UnsupportedOperation, _engine
from turbocql.policies import NoSpeculativeExecutionPolicy, RetryPolicy, _engine_form, default_lbp_factory
from turbocql.query import named_tuple_factory

EXEC_PROFILE_DEFAULT = object()
"""Key of the default profile in ``Cluster(execution_profiles=...)``."""


class _Unset:
    def __repr__(self):
        return "_NOT_SET"


_UNSET = _Unset()


def _execution_profile_to_string(name):
    return "EXEC_PROFILE_DEFAULT" if name is EXEC_PROFILE_DEFAULT else '"%s"' % (name,)


class ExecutionProfile:
    """Per-request policies and defaults (classic fields): ``load_balancing_policy``
    (default: token-aware over DC-aware, local DC from the contact points),
    ``retry_policy``, ``consistency_level``, ``serial_consistency_level``,
    ``request_timeout``, ``row_factory``, ``speculative_execution_policy``."""

    def __init__(
        self,
        load_balancing_policy=_UNSET,
        retry_policy=None,
        consistency_level=ConsistencyLevel.LOCAL_ONE,
        serial_consistency_level=None,
        request_timeout=10.0,
        row_factory=named_tuple_factory,
        speculative_execution_policy=None,
        continuous_paging_options=None,
    ):
        if load_balancing_policy is _UNSET:
            self._load_balancing_policy_explicit = False
            load_balancing_policy = default_lbp_factory()
        else:
            self._load_balancing_policy_explicit = True
        _check_continuous_paging(continuous_paging_options)
        self.load_balancing_policy = load_balancing_policy
        self.retry_policy = retry_policy or RetryPolicy()
        if serial_consistency_level is not None and not ConsistencyLevel.is_serial(serial_consistency_level):
            raise ValueError(
                "serial_consistency_level must be either ConsistencyLevel.SERIAL or ConsistencyLevel.LOCAL_SERIAL"
            )
        self.consistency_level = consistency_level
        self.serial_consistency_level = serial_consistency_level
        self.request_timeout = request_timeout
        self.row_factory = row_factory
        self.speculative_execution_policy = speculative_execution_policy or NoSpeculativeExecutionPolicy()
        self.continuous_paging_options = None

    def __setattr__(self, name, value):
        if name == "continuous_paging_options":
            _check_continuous_paging(value)
        object.__setattr__(self, name, value)
        if not name.startswith("_"):
            self._engine_changed()

    def _engine_changed(self):
        """This profile, or a policy in it, changed: its engine form is built again at its
        next use, and the sessions whose defaults came from it read them again. No other
        profile is touched."""
        cached = self.__dict__.pop("_engine_cache", None)
        if cached is not None:
            cached.mark_stale()

    def __copy__(self):
        # A copy starts without this profile's engine form (a change to the copy must not
        # mark this one stale), but remembers it: a copy with the same policies (the
        # classic `execution_profile_clone_update(ep, consistency_level=...)` on each
        # request) shares their engine form instead of building its own.
        clone = object.__new__(type(self))
        attrs = clone.__dict__
        attrs.update(self.__dict__)
        cached = attrs.pop("_engine_cache", None)
        if cached is not None and not cached.stale:
            attrs["_engine_base"] = (
                self.load_balancing_policy,
                self.retry_policy,
                self.speculative_execution_policy,
                cached,
            )
        return clone

    def _engine_profile(self):
        """The engine's form of this profile (built at first use and after a change)."""
        attrs = self.__dict__
        cached = attrs.get("_engine_cache")
        if cached is not None and not cached.stale:
            return cached
        lbp = self.load_balancing_policy
        retry = self.retry_policy
        spec = self.speculative_execution_policy
        base = attrs.get("_engine_base")
        if base is not None and base[0] is lbp and base[1] is retry and base[2] is spec and not base[3].stale:
            profile = base[3].with_defaults(
                self.consistency_level, self.serial_consistency_level, self.request_timeout, self.row_factory
            )
        else:
            attrs.pop("_engine_base", None)
            profile = _engine.EngineProfile(
                _engine_form(lbp) if lbp is not None else None,
                retry._engine_policy() if retry is not None else None,
                spec._engine_policy() if spec is not None else None,
                self.consistency_level,
                self.serial_consistency_level,
                self.request_timeout,
                self.row_factory,
            )
            for policy in (lbp, retry, spec):
                _used_by(policy, self)
        attrs["_engine_cache"] = profile
        return profile

    def __repr__(self):
        return "<%s lbp=%r retry=%r cl=%s timeout=%s>" % (
            type(self).__name__,
            self.load_balancing_policy,
            self.retry_policy,
            ConsistencyLevel.value_to_name.get(self.consistency_level, self.consistency_level),
            self.request_timeout,
        )


def _check_continuous_paging(options):
    if options is not None:
        raise UnsupportedOperation("continuous_paging_options (DSE continuous paging) is not supported")


def _used_by(policy, profile):
    """Notes that ``profile``'s engine form was built from ``policy`` (and the policies it
    wraps), so that a change to the policy marks that profile alone stale
    (``turbocql.policies._policy_changed``)."""
    while policy is not None:
        users = policy.__dict__.get("_engine_users")
        if users is None:
            users = policy.__dict__["_engine_users"] = weakref.WeakSet()
        users.add(profile)
        policy = getattr(policy, "_child_policy", None)


class ProfileManager:
    """A cluster's execution profiles by name (``profiles``) and its ``default``."""

    def __init__(self):
        self.profiles = {}

    @property
    def default(self):
        return self.profiles[EXEC_PROFILE_DEFAULT]

    def _profiles_without_explicit_lbps(self):
        return [
            _execution_profile_to_string(name)
            for name, p in self.profiles.items()
            if not p._load_balancing_policy_explicit
        ]

    def check_supported(self):
        """Calls each profile's load-balancing ``check_supported()`` (as the classic driver
        does when the cluster first connects): a user's policy may raise there."""
        for profile in self.profiles.values():
            lbp = profile.load_balancing_policy
            if lbp is not None:
                lbp.check_supported()

    def populate(self, cluster, hosts):
        """Hands the hosts to every profile's load-balancing policy (it learns the local
        datacenter from them, as in the classic driver)."""
        seen = set()
        for profile in self.profiles.values():
            lbp = profile.load_balancing_policy
            if lbp is not None and id(lbp) not in seen:
                seen.add(id(lbp))
                lbp.populate(cluster, hosts)


class _ConfigMode:
    UNCOMMITTED = 0
    LEGACY = 1
    PROFILES = 2
