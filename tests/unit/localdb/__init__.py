"""Unit tests of turbocql.localdb, one file per module of the sub-package."""
