"""Load-balancing, retry and reconnection policies, under the classic driver's names.

The engine routes requests itself (token-aware and datacenter-aware, like
``TokenAwarePolicy(DCAwareRoundRobinPolicy())``) and retries as the classic default
``RetryPolicy`` does; these classes are accepted so that classic configuration code runs.
"""


class LoadBalancingPolicy:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class RoundRobinPolicy(LoadBalancingPolicy):
    pass


class DCAwareRoundRobinPolicy(LoadBalancingPolicy):
    def __init__(self, local_dc="", used_hosts_per_remote_dc=0):
        LoadBalancingPolicy.__init__(self)
        self.local_dc = local_dc
        self.used_hosts_per_remote_dc = used_hosts_per_remote_dc


class TokenAwarePolicy(LoadBalancingPolicy):
    def __init__(self, child_policy, shuffle_replicas=True):
        LoadBalancingPolicy.__init__(self)
        self._child_policy = child_policy
        self.shuffle_replicas = shuffle_replicas


class WhiteListRoundRobinPolicy(RoundRobinPolicy):
    def __init__(self, hosts):
        RoundRobinPolicy.__init__(self)
        self._allowed_hosts = tuple(hosts)


class RetryPolicy:
    RETRY, RETHROW, IGNORE, RETRY_NEXT_HOST = 0, 1, 2, 3


class FallthroughRetryPolicy(RetryPolicy):
    pass


class ReconnectionPolicy:
    pass


class ConstantReconnectionPolicy(ReconnectionPolicy):
    def __init__(self, delay, max_attempts=64):
        if delay < 0:
            raise ValueError("delay must not be negative")
        self.delay = delay
        self.max_attempts = max_attempts


class ExponentialReconnectionPolicy(ReconnectionPolicy):
    def __init__(self, base_delay, max_delay, max_attempts=64):
        if base_delay < 0 or max_delay < 0:
            raise ValueError("Delays may not be negative")
        if max_delay < base_delay:
            raise ValueError("Max delay must be greater than base delay")
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.max_attempts = max_attempts
