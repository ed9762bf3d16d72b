"""The audit of docs/audit-accepted-settings.md, outside Cluster(...) (test_cluster_args.py
has those): statement attributes, Session arguments, policies' overridable methods and
ExecutionProfile fields are honoured or raise UnsupportedOperation naming them."""

import pytest

from turbocql import UnsupportedOperation, _engine
from turbocql import policies as ours
from turbocql.cluster import Cluster, ExecutionProfile, ResponseFuture, Session, _populated
from turbocql.query import BatchStatement, BoundStatement, PreparedStatement, SimpleStatement, Statement


class _Prepared:
    """Stands for the engine's prepared statement: what PreparedStatement() reads."""

    query_string = "SELECT * FROM t WHERE k = ?"
    query_id = b"\x01audit"
    keyspace = "ks"
    table = "t"
    param_names = ["k"]
    param_types = ["int"]
    result_column_names = ["k"]
    result_column_types = ["int"]
    routing_key_indexes = [0]
    is_lwt = False


def _prepared():
    return PreparedStatement(_Prepared())


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: Statement(**kw),
        lambda **kw: SimpleStatement("SELECT 1", **kw),
        lambda **kw: BoundStatement(_prepared(), **kw),
        lambda **kw: BatchStatement(**kw),
    ],
    ids=["Statement", "SimpleStatement", "BoundStatement", "BatchStatement"],
)
@pytest.mark.parametrize("attribute", ["retry_policy", "custom_payload"])
def test_statement_retry_policy_and_custom_payload_are_refused(make, attribute):
    value = ours.FallthroughRetryPolicy() if attribute == "retry_policy" else {"k": b"v"}
    with pytest.raises(UnsupportedOperation, match=r"\.%s: " % attribute):
        make(**{attribute: value})
    statement = make()
    assert getattr(statement, attribute) is None
    with pytest.raises(UnsupportedOperation, match=r"\.%s: " % attribute):
        setattr(statement, attribute, value)
    assert getattr(statement, attribute) is None
    setattr(statement, attribute, None)  # the default stays accepted


@pytest.mark.parametrize("attribute", ["retry_policy", "custom_payload"])
def test_prepared_statement_retry_policy_and_custom_payload_are_refused(attribute):
    ps = _prepared()
    assert getattr(ps, attribute) is None
    with pytest.raises(UnsupportedOperation, match="PreparedStatement.%s: " % attribute):
        setattr(ps, attribute, {"k": b"v"} if attribute == "custom_payload" else ours.RetryPolicy())
    assert getattr(BoundStatement(ps), attribute) is None


def test_statement_class_attributes_read_as_the_classic_defaults():
    from cassandra import query as classic

    for name in ("retry_policy", "custom_payload"):
        for ours_cls, classic_cls in (
            (Statement, classic.Statement),
            (SimpleStatement, classic.SimpleStatement),
            (PreparedStatement, classic.PreparedStatement),
        ):
            assert getattr(ours_cls, name) is None is getattr(classic_cls, name)


class _StubSession(Session):
    """A Session without a connection: enough for arguments checked before any I/O."""

    def __init__(self):
        object.__setattr__(self, "cluster", Cluster(["127.0.0.1"]))

    @property
    def _session(self):
        raise AssertionError("prepare() reached the engine")


def test_prepare_custom_payload_is_refused():
    with pytest.raises(UnsupportedOperation, match=r"prepare\(custom_payload=\.\.\.\)"):
        _StubSession().prepare("SELECT 1", custom_payload={"k": b"v"})


def test_max_trace_wait_bounds_the_trace_wait():
    class Trace:
        events = None

        def __init__(self, session):
            self._session = session
            self.waits = []

        def populate(self, max_wait, query_cl):
            self.waits.append(max_wait)

    session = _StubSession()
    assert session.max_trace_wait == 2.0
    trace = Trace(session)
    _populated(trace, None, 1)
    session.max_trace_wait = 7.5
    _populated(trace, None, 1)
    _populated(trace, 0.5, 1)
    assert trace.waits == [2.0, 7.5, 0.5]
    assert "max_trace_wait" in ResponseFuture.get_query_trace.__doc__


def test_execution_profile_continuous_paging_options_refused_when_assigned():
    profile = ExecutionProfile()
    with pytest.raises(UnsupportedOperation, match="continuous_paging_options"):
        profile.continuous_paging_options = object()
    assert profile.continuous_paging_options is None
    profile.continuous_paging_options = None


@pytest.mark.parametrize("method", ["populate", "on_up", "on_down", "on_add", "on_remove"])
@pytest.mark.parametrize(
    "base",
    [ours.RoundRobinPolicy, ours.DCAwareRoundRobinPolicy, ours.WhiteListRoundRobinPolicy, ours.TokenAwarePolicy],
)
def test_a_builtin_subclass_keeping_its_own_hosts_is_asked_per_request(base, method):
    # Its make_query_plan reads the hosts these methods keep: the engine asks it for each
    # request's plan (as the classic driver does) rather than route as the built-in would.
    def own(self, *args):
        return getattr(base, method)(self, *args)

    cls = type("Mine", (base,), {method: own})
    args = {
        ours.WhiteListRoundRobinPolicy: (["127.0.0.1"],),
        ours.TokenAwarePolicy: (ours.RoundRobinPolicy(),),
    }.get(base, ())
    assert cls(*args)._engine_policy().is_custom
    assert not base(*args)._engine_policy().is_custom


def test_check_supported_is_called_at_first_connect():
    class Refusing(ours.RoundRobinPolicy):
        def check_supported(self):
            raise RuntimeError("not for this cluster")

    cluster = Cluster(["127.0.0.1"], execution_profiles={"x": ExecutionProfile(Refusing())})
    cluster._engine_connect = lambda *a, **k: pytest.fail("connected before check_supported")
    with pytest.raises(RuntimeError, match="not for this cluster"):
        cluster.connect()


def test_no_speculative_execution_subclass_with_its_own_new_plan_is_refused():
    class Mine(ours.NoSpeculativeExecutionPolicy):
        def new_plan(self, keyspace, statement):
            return ours.ConstantSpeculativeExecutionPolicy(0.1, 2).new_plan(keyspace, statement)

    class Plain(ours.NoSpeculativeExecutionPolicy):
        pass

    with pytest.raises(UnsupportedOperation, match="Mine.*new_plan"):
        Mine()._engine_policy()
    assert Plain()._engine_policy() is None
    with pytest.raises(UnsupportedOperation, match="Mine"):
        ExecutionProfile(speculative_execution_policy=Mine())._engine_profile()


def test_constant_speculative_subclass_with_its_own_plan_class_is_refused():
    class Plan(ours.ConstantSpeculativeExecutionPolicy.ConstantSpeculativeExecutionPlan):
        def next_execution(self, host):
            return -1

    class Mine(ours.ConstantSpeculativeExecutionPolicy):
        ConstantSpeculativeExecutionPlan = Plan

    with pytest.raises(UnsupportedOperation, match="Mine"):
        Mine(0.1, 2)._engine_policy()


def test_downgrading_subclass_with_its_own_pick_consistency_is_called():
    class Mine(ours.DowngradingConsistencyRetryPolicy):
        def _pick_consistency(self, num_responses):
            return self.RETHROW, None

    engine = Mine()._engine_policy()
    assert isinstance(engine, _engine.Retry)
    assert "Downgrading" not in repr(engine)
    assert "Downgrading" in repr(ours.DowngradingConsistencyRetryPolicy()._engine_policy())


@pytest.mark.parametrize(
    "argument, cls",
    [
        ("load_balancing_policy", ours.RoundRobinPolicy),
        ("reconnection_policy", ours.ConstantReconnectionPolicy),
        ("default_retry_policy", ours.RetryPolicy),
        ("address_translator", ours.IdentityTranslator),
    ],
)
def test_a_policy_class_instead_of_an_instance_is_a_type_error(argument, cls):
    with pytest.raises(TypeError, match="%s should not be a class" % argument):
        Cluster(**{argument: cls})
    assert Cluster.metadata is None  # declared on the class, as classic (Mock(spec=Cluster))
