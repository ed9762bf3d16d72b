"""Unit tests of turbocql_localdb, one file per module of the package."""
