"""The token ring split for parallel work: ``N`` ranges of equal width covering the whole
Murmur3 ring exactly once, and ``--split I/N`` shares of it, so that many processes (or
machines) can unload or count one table together, each taking its own share."""

from __future__ import annotations

MIN_TOKEN = -(2**63)
MAX_TOKEN = 2**63 - 1
_RING = 2**64


def parse_split(text: str | None) -> tuple[int, int]:
    """``"I/N"`` (1-based share I of N) as ``(I, N)``; None: the whole ring, ``(1, 1)``."""
    if text is None:
        return (1, 1)
    try:
        i, n = (int(x) for x in str(text).split("/"))
    except ValueError:
        raise ValueError("split must be I/N (share I of N, 1 <= I <= N), got %r" % (text,)) from None
    if not 1 <= i <= n:
        raise ValueError("split must be I/N with 1 <= I <= N, got %r" % (text,))
    return (i, n)


def token_ranges(parts: int, split: tuple[int, int] = (1, 1)) -> list[tuple[int, int]]:
    """Share ``split`` = (I, N) of the ring cut into ``parts`` ranges ``(start, end]`` of equal
    width. The N shares, each cut into any number of parts, together cover every token once:
    share I is the ring's slice (I-1)/N .. I/N, and the token ``MIN_TOKEN`` (which Murmur3
    never gives a key) is the open start of the first."""
    i, n = split
    if parts < 1:
        raise ValueError("parts must be at least 1, got %r" % (parts,))
    lo = MIN_TOKEN + (i - 1) * _RING // n
    hi = MIN_TOKEN + i * _RING // n if i < n else MAX_TOKEN
    width = hi - lo
    bounds = [lo + k * width // parts for k in range(parts)] + [hi]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
