"""Each session reads its defaults (from its default execution profile) once, and again
only when that profile, a policy in it, or the session's own settings change: a change
to another profile, another cluster's, or a profile cloned per request leaves its
defaults alone. A change is still honoured at the next request."""

import pytest

from tests.conftest import HOST, PORT
from turbocql import ConsistencyLevel
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
from turbocql.policies import RoundRobinPolicy

pytestmark = pytest.mark.timeout(120)

QUERY = "SELECT key FROM system.local"


def _counting_reads(session):
    """Counts how often the engine reads the session's default profile (its defaults)."""
    reads = []
    engine_profile_for = session._engine_profile_for

    def counted(ep):
        if ep is None:
            reads.append(ep)
        return engine_profile_for(ep)

    # Bypasses Session.__setattr__, which would itself make the session read them again.
    session.__dict__["_engine_profile_for"] = counted
    return reads


def _at_three(run):
    """``run()`` was sent at THREE (the profile's level): on one node, Unavailable, given
    as NoHostAvailable once the default retry policy has tried the next host."""
    with pytest.raises(NoHostAvailable, match="Cannot achieve consistency level THREE"):
        run()


def _profiles():
    return {
        EXEC_PROFILE_DEFAULT: ExecutionProfile(RoundRobinPolicy()),
        "other": ExecutionProfile(RoundRobinPolicy()),
    }


def test_a_change_to_one_profile_leaves_every_other_sessions_defaults_alone(cassandra):
    with (
        Cluster([HOST], port=PORT, execution_profiles=_profiles()) as a,
        Cluster([HOST], port=PORT, execution_profiles=_profiles()) as b,
    ):
        sa, sb = a.connect(), b.connect()
        sa.execute(QUERY), sb.execute(QUERY)
        reads_a, reads_b = _counting_reads(sa), _counting_reads(sb)

        # Another profile of the same cluster changes: used at once, defaults kept.
        a.profile_manager.profiles["other"].consistency_level = ConsistencyLevel.THREE
        _at_three(lambda: sa.execute(QUERY, execution_profile="other"))
        # The clone-per-request idiom, 200 times.
        for _ in range(200):
            clone = sa.execution_profile_clone_update(EXEC_PROFILE_DEFAULT, consistency_level=ConsistencyLevel.ONE)
            assert sa.execute(QUERY, execution_profile=clone).one().key == "local"
        sa.execute(QUERY), sb.execute(QUERY)
        assert reads_a == [] and reads_b == []

        # Cluster a's default profile changes: a's session reads its defaults again, once
        # (and honours the change); b's does not.
        a.profile_manager.default.consistency_level = ConsistencyLevel.THREE
        for _ in range(3):
            _at_three(lambda: sa.execute(QUERY))
            assert sb.execute(QUERY).one().key == "local"
        assert len(reads_a) == 1 and reads_b == []


def test_a_clone_changed_in_its_defaults_is_honoured_and_leaves_its_origin_alone(cassandra):
    with Cluster([HOST], port=PORT, execution_profiles=_profiles()) as c:
        s = c.connect()
        s.execute(QUERY)
        three = s.execution_profile_clone_update("other", consistency_level=ConsistencyLevel.THREE)
        _at_three(lambda: s.execute(QUERY, execution_profile=three))
        assert s.execute(QUERY, execution_profile="other").one().key == "local"
        # A timeout set on a clone is the clone's alone.
        short = s.execution_profile_clone_update("other", request_timeout=0.000001)
        assert short.request_timeout == 0.000001
        assert c.profile_manager.profiles["other"].request_timeout == 10.0
