"""The ingestion client's workload (``ingest.py``; document 003 on Cassandra): the schema
(``geo`` with two SAI indexes, ``dictionary``, ``elements``), its statements, and the data,
generated deterministically from seeded generators (:func:`dictionary`, :func:`geo_rows`,
:func:`element_chunks`); what a chunk needs to be inserted and how many requests phase 2
makes; the check that the dictionary ``run_ingest.py`` loads is there.
"""

from __future__ import annotations

import random

KEYSPACE = "bench_ingest"
SEED = 20030
SEGMENTS = 40
KEYS_MIN, KEYS_MAX = 180, 220
MIN_GEO = 1000
GEO_PER_RECORDS = 25  # 1,500,000 records -> 60,000 geo rows, as the document's files

GEO_COLUMNS = (
    "logrecno",
    "fileid",
    "stusab",
    "sumlev",
    "geocomp",
    "chariter",
    "cifsn",
    "region",
    "division",
    "state",
    "county",
    "name",
    "pop100",
    "hu100",
)
SCHEMA = (
    "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
    % KEYSPACE,
    "CREATE TABLE IF NOT EXISTS %s.geo (logrecno int PRIMARY KEY, fileid text, stusab text, sumlev text, "
    "geocomp text, chariter text, cifsn text, region text, division text, state text, county text, name text, "
    "pop100 int, hu100 int)" % KEYSPACE,
    "CREATE CUSTOM INDEX IF NOT EXISTS geo_state ON %s.geo (state) USING 'StorageAttachedIndex'" % KEYSPACE,
    "CREATE CUSTOM INDEX IF NOT EXISTS geo_county ON %s.geo (county) USING 'StorageAttachedIndex'" % KEYSPACE,
    "CREATE TABLE IF NOT EXISTS %s.dictionary (segment int, position int, key text, PRIMARY KEY (segment, position))"
    % KEYSPACE,
    "CREATE TABLE IF NOT EXISTS %s.elements (logrecno int, segment int, key text, value int, "
    "PRIMARY KEY ((logrecno, segment), key))" % KEYSPACE,
)
INSERT_GEO = "INSERT INTO geo (%s) VALUES (%s)" % (", ".join(GEO_COLUMNS), ", ".join("?" * len(GEO_COLUMNS)))
INSERT_DICTIONARY = "INSERT INTO dictionary (segment, position, key) VALUES (?, ?, ?)"
SELECT_DICTIONARY = "SELECT key FROM dictionary WHERE segment = ?"
SELECT_GEO = "SELECT logrecno, name FROM geo WHERE logrecno = ?"
INSERT_ELEMENT = "INSERT INTO elements (logrecno, segment, key, value) VALUES (?, ?, ?, ?)"
SUMLEVS = ("040", "050", "060", "140", "150", "160", "500", "871")


def geo_count(records: int) -> int:
    """Phase 1's geo records for ``records`` phase-2 records: records / 25, at least 1,000."""
    return max(MIN_GEO, records // GEO_PER_RECORDS)


def dictionary(seed: int = SEED, segments: int = SEGMENTS) -> list[list[str]]:
    """The data dictionary: for segment ``s`` (1-based, item ``s - 1``) its keys in position
    order, 180 to 220 of them, named like SF1's (``P0010001``: table ``P`` + 3-digit segment
    + 4-digit item)."""
    rnd = random.Random(seed)
    return [
        ["P%03d%04d" % (s, p) for p in range(1, rnd.randint(KEYS_MIN, KEYS_MAX) + 1)] for s in range(1, segments + 1)
    ]


def dictionary_rows(seed: int = SEED) -> list[tuple[int, int, str]]:
    """``(segment, position, key)`` of every dictionary entry (what the runner preloads)."""
    return [(s, p, k) for s, keys in enumerate(dictionary(seed), 1) for p, k in enumerate(keys)]


def geo_rows(n: int, seed: int = SEED) -> list[tuple]:
    """``n`` geo records, logrecno 1..n, in the column order of :data:`GEO_COLUMNS`."""
    rnd = random.Random(seed + 1)
    out = []
    for logrecno in range(1, n + 1):
        county = "%03d" % rnd.randrange(1, 124, 2)
        sumlev = rnd.choice(SUMLEVS)
        name = "Block Group %d, Census Tract %d, County %s" % (rnd.randrange(1, 10), rnd.randrange(1, 9999), county)
        out.append(
            (
                logrecno,
                "uSF1",
                "NY",
                sumlev,
                "00",
                "000",
                "01",
                "1",
                "2",
                "36",
                county,
                name,
                rnd.randrange(0, 5000),
                rnd.randrange(0, 2000),
            )
        )
    return out


def element_chunks(records: int, n_geo: int, seed: int = SEED) -> list[tuple[int, int, list[int]]]:
    """The data lines: ``(logrecno, segment, values)``, one value per key of the segment
    (fewer in the last line), ``records`` values in all."""
    sizes = [len(keys) for keys in dictionary(seed)]
    rnd = random.Random(seed + 2)
    values = rnd.randrange
    out = []
    left, i = records, 0
    while left > 0:
        segment = 1 + i % SEGMENTS
        logrecno = 1 + (i // SEGMENTS) % n_geo
        n = min(sizes[segment - 1], left)
        out.append((logrecno, segment, [values(100_000) for _ in range(n)]))
        left -= n
        i += 1
    return out


def chunk_problem(line, keys: list, geo_row) -> str | None:
    """Why a chunk cannot be inserted after its SELECTs (None: it can): its geo row is
    missing, or the dictionary has fewer keys than the chunk has values."""
    logrecno, segment, values = line
    if geo_row is None:
        return f"chunk ({logrecno}, {segment}): no geo row {logrecno}"
    if len(keys) < len(values):
        return f"chunk ({logrecno}, {segment}): {len(keys)} dictionary keys for {len(values)} values"
    return None


def chunk_requests(chunks) -> int:
    """Requests of phase 2: two SELECTs per chunk and one INSERT per value."""
    return sum(2 + len(values) for _, _, values in chunks)


def check_dictionary(keys_of) -> None:
    """The dictionary must be there (``run_ingest.py`` preloads it): segment 1's keys."""
    want = dictionary()[0]
    got = keys_of(1)
    if list(got) != want:
        raise RuntimeError(
            f"{KEYSPACE}.dictionary holds {len(got)} keys for segment 1 where {len(want)} were expected: "
            "run benchmarks/run_ingest.py once (it creates the schema and loads the dictionary)"
        )


STATEMENTS = {
    "insert_geo": INSERT_GEO,
    "select_dictionary": SELECT_DICTIONARY,
    "select_geo": SELECT_GEO,
    "insert_element": INSERT_ELEMENT,
}
