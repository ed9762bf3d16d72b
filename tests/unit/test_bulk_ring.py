"""The token ring split of ``turbocql.bulk``: ranges cover every token of a share once, and
the shares of a split cover the ring once (pure logic, no server)."""

import pytest

from turbocql.bulk._ring import MAX_TOKEN, MIN_TOKEN, parse_split, token_ranges


@pytest.mark.parametrize("parts", [1, 2, 7, 64, 1000])
def test_ranges_are_contiguous_and_cover_the_ring(parts):
    ranges = token_ranges(parts)
    assert len(ranges) == parts
    assert ranges[0][0] == MIN_TOKEN and ranges[-1][1] == MAX_TOKEN
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert all(lo < hi for lo, hi in ranges)


@pytest.mark.parametrize("n", [1, 2, 3, 10, 97])
def test_shares_tile_the_ring(n):
    shares = [token_ranges(5, (i, n)) for i in range(1, n + 1)]
    flat = [r for s in shares for r in s]
    assert flat[0][0] == MIN_TOKEN and flat[-1][1] == MAX_TOKEN
    assert all(a[1] == b[0] for a, b in zip(flat, flat[1:]))


def test_parse_split():
    assert parse_split(None) == (1, 1)
    assert parse_split("2/5") == (2, 5)
    for bad in ("0/3", "4/3", "x", "1/0", "1-3"):
        with pytest.raises(ValueError, match="split must be I/N"):
            parse_split(bad)
