"""The native Murmur3 hash, under the classic name of the C extension that provides it
(``cassandra.cmurmur3``): here it is the engine's, the one ``turbocql.murmur3`` exports."""

from turbocql.murmur3 import murmur3

__all__ = ["murmur3"]
