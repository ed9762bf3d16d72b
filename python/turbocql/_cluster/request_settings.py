"""The request settings a Cluster holds for its sessions: the legacy parameters
(``load_balancing_policy``, ``default_retry_policy``) against execution profiles
(``add_execution_profile``), and the client timestamp generator with its engine clock.
``ClusterProfiles`` is a base class of ``Cluster``; the profiles themselves are
``turbocql._policies.profiles``'s.
"""

from turbocql import _engine
from turbocql._policies.profiles import ExecutionProfile, _ConfigMode
from turbocql.timestamps import MonotonicTimestampGenerator


class ClusterProfiles:
    """The legacy parameters, execution profiles and client timestamps of ``Cluster`` (a
    base class of it)."""

    @property
    def load_balancing_policy(self):
        """The legacy default load-balancing policy (use execution profiles instead)."""
        return self._load_balancing_policy

    @load_balancing_policy.setter
    def load_balancing_policy(self, lbp):
        if self._config_mode == _ConfigMode.PROFILES:
            raise ValueError(
                "Cannot set Cluster.load_balancing_policy while using Configuration Profiles. "
                "Set this in a profile instead."
            )
        self._load_balancing_policy = lbp
        self._config_mode = _ConfigMode.LEGACY
        self._legacy_changed()

    @property
    def default_retry_policy(self):
        """The legacy default retry policy (use execution profiles instead)."""
        return self._default_retry_policy

    @default_retry_policy.setter
    def default_retry_policy(self, policy):
        if self._config_mode == _ConfigMode.PROFILES:
            raise ValueError(
                "Cannot set Cluster.default_retry_policy while using Configuration Profiles. "
                "Set this in a profile instead."
            )
        self._default_retry_policy = policy
        self._config_mode = _ConfigMode.LEGACY
        self._legacy_changed()

    def _legacy_changed(self):
        # Each session of this cluster makes its legacy profile again (assigning the
        # attribute makes the session read its defaults again); no other cluster's.
        for s in self.sessions:
            s._legacy_profile_cache = None

    @property
    def timestamp_generator(self):
        """The callable giving each request's client timestamp (microseconds); the default
        is a :class:`~turbocql.timestamps.MonotonicTimestampGenerator`."""
        return self._timestamp_generator

    @timestamp_generator.setter
    def timestamp_generator(self, generator):
        self._timestamp_generator = generator
        for session in self.sessions:
            session._build_request.settings_changed()

    def _engine_clock(self):
        """The engine clock of ``timestamp_generator``: the engine's own monotonic clock for
        an unmodified :class:`MonotonicTimestampGenerator` (same rule, no Python call per
        request), otherwise the generator itself, called for each request."""
        gen = self.timestamp_generator
        cached = self.__dict__.get("_clock_of")
        if cached is not None and cached[0] is gen:
            return cached[1]
        if type(gen) is MonotonicTimestampGenerator:
            clock = _engine.ClientClock.monotonic(
                bool(gen.warn_on_drift), float(gen.warning_threshold), float(gen.warning_interval)
            )
        elif callable(gen):
            clock = _engine.ClientClock.python(gen)
        else:
            raise TypeError("timestamp_generator must be callable (it returns microseconds since the epoch)")
        self._clock_of = (gen, clock)
        return clock

    def add_execution_profile(self, name, profile, pool_wait_timeout=5):
        """Adds a named :class:`ExecutionProfile` (raises if the name is taken or the
        cluster uses the legacy parameters)."""
        if not isinstance(profile, ExecutionProfile):
            raise TypeError("profile must be an instance of ExecutionProfile")
        if self._config_mode == _ConfigMode.LEGACY:
            raise ValueError("Cannot add execution profiles when legacy parameters are set explicitly.")
        if name in self.profile_manager.profiles:
            raise ValueError(f"Profile {name} already exists")
        self.profile_manager.profiles[name] = profile
        live = [s for s in self.sessions if not s.is_shutdown]
        if live and profile.load_balancing_policy is not None:
            profile.load_balancing_policy.populate(self, live[0]._session.nodes())
