"""The classic driver's event-loop modules (``cassandra.io.*``), for configuration only.

Each module holds the connection class classic code names in
``Cluster(connection_class=...)`` (``LibevConnection``, ``AsyncoreConnection``,
``AsyncioConnection``, ``GeventConnection``, ``EventletConnection``,
``TwistedConnection``). turbocql accepts them and runs every connection in its engine
whatever the choice; none needs its event loop's package (libev, gevent, eventlet,
twisted) to be installed.
"""
