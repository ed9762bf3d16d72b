"""Retry, speculative-execution, reconnection and conviction policies: what the driver does
when a request fails or is slow, or a host is lost (re-exported by
:mod:`turbocql.policies`, the classic ``cassandra.policies``).

The engine applies them: each built-in policy describes itself to the engine
(``_engine_policy()``) and the engine builds the scylla crate's policy of the same meaning
(src/exec/retry.rs). A user's ``RetryPolicy`` subclass is called by the engine when a
request fails (never when it succeeds); reconnection and speculative-execution policies
other than the built-in ones are refused, since the engine would never call them.
"""

from itertools import cycle

from turbocql import ConsistencyLevel, OperationTimedOut, UnsupportedOperation, WriteType, _engine


def _overrides(cls, base, names):
    """True if ``cls`` (a subclass of ``base``) redefines one of ``names``."""
    return any(getattr(cls, n) is not getattr(base, n) for n in names)


class ConvictionPolicy:
    """Decides from a host's failures whether to mark it down (configuration only: the
    engine marks a host down when its connections fail)."""

    def __init__(self, host):
        self.host = host

    def add_failure(self, connection_exc):
        raise NotImplementedError()

    def reset(self):
        raise NotImplementedError()


class SimpleConvictionPolicy(ConvictionPolicy):
    def add_failure(self, connection_exc):
        return not isinstance(connection_exc, OperationTimedOut)

    def reset(self):
        pass


class ReconnectionPolicy:
    """How long to wait between attempts to reconnect to a host (run by the engine)."""

    def new_schedule(self):
        raise NotImplementedError()

    def _engine_policy(self):
        raise UnsupportedOperation(
            "%s: only ConstantReconnectionPolicy and ExponentialReconnectionPolicy are supported by turbocql"
            % type(self).__name__
        )

    def _check_builtin(self, base):
        if type(self) is not base and _overrides(type(self), base, ("new_schedule",)):
            ReconnectionPolicy._engine_policy(self)


class ConstantReconnectionPolicy(ReconnectionPolicy):
    def __init__(self, delay, max_attempts=64):
        if delay < 0:
            raise ValueError("delay must not be negative")
        if max_attempts is not None and max_attempts < 0:
            raise ValueError("max_attempts must not be negative")
        self.delay = delay
        self.max_attempts = max_attempts

    def new_schedule(self):
        if self.max_attempts:
            return [self.delay] * self.max_attempts
        return cycle([self.delay])

    def _engine_policy(self):
        self._check_builtin(ConstantReconnectionPolicy)
        return _engine.Reconnection.constant(float(self.delay), self.max_attempts or None)


class ExponentialReconnectionPolicy(ReconnectionPolicy):
    def __init__(self, base_delay, max_delay, max_attempts=64):
        if base_delay < 0 or max_delay < 0:
            raise ValueError("Delays may not be negative")
        if max_delay < base_delay:
            raise ValueError("Max delay must be greater than base delay")
        if max_attempts is not None and max_attempts < 0:
            raise ValueError("max_attempts must not be negative")
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.max_attempts = max_attempts

    def new_schedule(self):
        i, overflowed = 0, False
        while self.max_attempts is None or i < self.max_attempts:
            if overflowed:
                yield self.max_delay
            else:
                delay = min(self.base_delay * (2**i), self.max_delay)
                overflowed = delay >= self.max_delay
                yield delay
            i += 1

    def _engine_policy(self):
        self._check_builtin(ExponentialReconnectionPolicy)
        return _engine.Reconnection.exponential(
            float(self.base_delay), float(self.max_delay), self.max_attempts or None
        )


_RETRY_METHODS = ("on_read_timeout", "on_write_timeout", "on_unavailable", "on_request_error")


class RetryPolicy:
    """What to do when a request fails: the classic decisions, applied by the engine.

    Each method returns ``(decision, consistency_level)``: ``RETRY`` (same host),
    ``RETRY_NEXT_HOST``, ``RETHROW`` or ``IGNORE``. This class itself runs in the engine
    as the scylla crate's default policy, which decides as these methods do, and does not
    retry a non-idempotent statement after its connection broke or the host reported
    itself overloaded (the write may have been applied). A subclass's methods are called
    by the engine, on failures only; their ``query`` argument is None.
    """

    RETRY = 0
    RETHROW = 1
    IGNORE = 2
    RETRY_NEXT_HOST = 3

    def on_read_timeout(self, query, consistency, required_responses, received_responses, data_retrieved, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if received_responses >= required_responses and not data_retrieved:
            return self.RETRY, consistency
        return self.RETHROW, None

    def on_write_timeout(self, query, consistency, write_type, required_responses, received_responses, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if write_type == WriteType.BATCH_LOG:
            return self.RETRY, consistency
        return self.RETHROW, None

    def on_unavailable(self, query, consistency, required_replicas, alive_replicas, retry_num):
        return (self.RETRY_NEXT_HOST, None) if retry_num == 0 else (self.RETHROW, None)

    def on_request_error(self, query, consistency, error, retry_num):
        return self.RETRY_NEXT_HOST, None

    def _engine_policy(self):
        for base, make in (
            (FallthroughRetryPolicy, _engine.Retry.fallthrough),
            (NeverRetryPolicy, _engine.Retry.fallthrough),
            (DowngradingConsistencyRetryPolicy, _engine.Retry.downgrading_consistency),
            (RetryPolicy, _engine.Retry.default_policy),
        ):
            if isinstance(self, base):
                # DowngradingConsistencyRetryPolicy's decisions also come from _pick_consistency.
                methods = _RETRY_METHODS + (("_pick_consistency",) if hasattr(base, "_pick_consistency") else ())
                if type(self) is base or not _overrides(type(self), base, methods):
                    return make()
                break
        return _engine.Retry.python(self)


class FallthroughRetryPolicy(RetryPolicy):
    """Never retries: every error is raised."""

    def on_read_timeout(self, *args, **kwargs):
        return self.RETHROW, None

    def on_write_timeout(self, *args, **kwargs):
        return self.RETHROW, None

    def on_unavailable(self, *args, **kwargs):
        return self.RETHROW, None

    def on_request_error(self, *args, **kwargs):
        return self.RETHROW, None


class NeverRetryPolicy(FallthroughRetryPolicy):
    """Never retries."""


class DowngradingConsistencyRetryPolicy(RetryPolicy):
    """Retries at a lower consistency level when too few replicas answered (deprecated in
    the classic driver; run by the engine as the scylla crate's policy of this name)."""

    def _pick_consistency(self, num_responses):
        if num_responses >= 3:
            return self.RETRY, ConsistencyLevel.THREE
        if num_responses >= 2:
            return self.RETRY, ConsistencyLevel.TWO
        if num_responses >= 1:
            return self.RETRY, ConsistencyLevel.ONE
        return self.RETHROW, None

    def on_read_timeout(self, query, consistency, required_responses, received_responses, data_retrieved, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if ConsistencyLevel.is_serial(consistency):
            return self.RETHROW, None
        if received_responses < required_responses:
            return self._pick_consistency(received_responses)
        if not data_retrieved:
            return self.RETRY, consistency
        return self.RETHROW, None

    def on_write_timeout(self, query, consistency, write_type, required_responses, received_responses, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if write_type in (WriteType.SIMPLE, WriteType.BATCH, WriteType.COUNTER):
            if received_responses > 0:
                return self.IGNORE, None
            return self.RETHROW, None
        if write_type == WriteType.UNLOGGED_BATCH:
            return self._pick_consistency(received_responses)
        if write_type == WriteType.BATCH_LOG:
            return self.RETRY, consistency
        return self.RETHROW, None

    def on_unavailable(self, query, consistency, required_replicas, alive_replicas, retry_num):
        if retry_num != 0:
            return self.RETHROW, None
        if ConsistencyLevel.is_serial(consistency):
            return self.RETRY_NEXT_HOST, None
        return self._pick_consistency(alive_replicas)


class SpeculativeExecutionPolicy:
    """Base class: when to send more attempts of a slow idempotent request."""

    def new_plan(self, keyspace, statement):
        raise NotImplementedError()

    def _engine_policy(self):
        raise UnsupportedOperation(
            "%s: only ConstantSpeculativeExecutionPolicy and NoSpeculativeExecutionPolicy are supported by "
            "turbocql; a policy's own new_plan is never called (the engine runs speculative executions)"
            % type(self).__name__
        )


class SpeculativeExecutionPlan:
    def next_execution(self, host):
        raise NotImplementedError()


class NoSpeculativeExecutionPlan(SpeculativeExecutionPlan):
    def next_execution(self, host):
        return -1


class NoSpeculativeExecutionPolicy(SpeculativeExecutionPolicy):
    def new_plan(self, keyspace, statement):
        return NoSpeculativeExecutionPlan()

    def _engine_policy(self):
        # A subclass's own new_plan would never be called: refused, not ignored.
        if type(self) is not NoSpeculativeExecutionPolicy and _overrides(
            type(self), NoSpeculativeExecutionPolicy, ("new_plan",)
        ):
            SpeculativeExecutionPolicy._engine_policy(self)
        return None


class ConstantSpeculativeExecutionPolicy(SpeculativeExecutionPolicy):
    """Up to ``max_attempts`` more attempts, ``delay`` seconds apart, on other hosts, for
    statements marked ``is_idempotent`` only (run by the engine)."""

    def __init__(self, delay, max_attempts):
        self.delay = delay
        self.max_attempts = max_attempts

    class ConstantSpeculativeExecutionPlan(SpeculativeExecutionPlan):
        def __init__(self, delay, max_attempts):
            self.delay = delay
            self.remaining = max_attempts

        def next_execution(self, host):
            if self.remaining > 0:
                self.remaining -= 1
                return self.delay
            return -1

    def new_plan(self, keyspace, statement):
        return self.ConstantSpeculativeExecutionPlan(self.delay, self.max_attempts)

    def _engine_policy(self):
        if type(self) is not ConstantSpeculativeExecutionPolicy and _overrides(
            type(self), ConstantSpeculativeExecutionPolicy, ("new_plan", "ConstantSpeculativeExecutionPlan")
        ):
            SpeculativeExecutionPolicy._engine_policy(self)
        if self.delay < 0 or self.max_attempts < 0:
            raise ValueError("ConstantSpeculativeExecutionPolicy needs a delay and max_attempts of at least 0")
        return (float(self.delay), int(self.max_attempts))
