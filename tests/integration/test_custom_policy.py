"""A user's load-balancing policy with its own make_query_plan: asked once per request,
with the statement, on every path; its plan is followed (an empty plan: NoHostAvailable)."""

import asyncio

import pytest

from tests.conftest import HOST, PORT
from turbocql import aio
from turbocql.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
from turbocql.concurrent import WritePipeline, execute_concurrent_with_args
from turbocql.policies import RoundRobinPolicy


class Recording(RoundRobinPolicy):
    """Round robin, recording what each plan was asked for; empty plans when told."""

    def __init__(self):
        RoundRobinPolicy.__init__(self)
        self.asked = []
        self.empty = False

    def make_query_plan(self, working_keyspace=None, query=None):
        self.asked.append(query)
        if self.empty:
            return iter(())
        return RoundRobinPolicy.make_query_plan(self, working_keyspace, query)


@pytest.fixture
def recorded(cassandra, keyspace):
    policy = Recording()
    c = Cluster([HOST], port=PORT, execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(policy)})
    s = c.connect(keyspace)
    s.execute("CREATE TABLE IF NOT EXISTS custom_lbp (k int PRIMARY KEY, v int)")
    policy.asked.clear()
    yield s, policy
    c.shutdown()


def test_plan_is_asked_once_per_request_with_the_statement(recorded):
    session, policy = recorded
    insert = session.prepare("INSERT INTO custom_lbp (k, v) VALUES (?, ?)")
    policy.asked.clear()
    session.execute(insert, (1, 1))
    session.execute_async(insert, (2, 2)).result()
    assert policy.asked == [insert, insert]
    policy.asked.clear()
    execute_concurrent_with_args(session, insert, [(k, k) for k in range(10)])
    assert policy.asked == [insert] * 10
    policy.asked.clear()
    with WritePipeline(session) as p:
        for k in range(5):
            p.execute(insert, (k, k))
    assert policy.asked == [insert] * 5

    async def run():
        await aio.Session(session).execute(insert, (3, 3))

    policy.asked.clear()
    asyncio.run(run())
    assert policy.asked == [insert]
    assert session.execute("SELECT v FROM custom_lbp WHERE k = 3").one().v == 3


def test_empty_plan_raises_no_host_available(recorded):
    session, policy = recorded
    policy.empty = True
    with pytest.raises(NoHostAvailable):
        session.execute("SELECT * FROM custom_lbp WHERE k = 1")
    policy.empty = False
    assert session.execute("SELECT count(*) FROM custom_lbp").one()[0] >= 0
