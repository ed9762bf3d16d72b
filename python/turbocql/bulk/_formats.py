"""The file formats of ``turbocql load`` / ``unload``: CSV, JSON lines, Parquet and Arrow IPC,
read into (and written from) Arrow record batches.

CSV fields are read as strings, whatever they look like (``007`` stays ``007`` for a text
column), and the engine reads each as its column's CQL text form (``codec::from_text``). An
empty unquoted field is null, ``""`` an empty string (as ``unload`` writes them). JSON lines
are read one object a line: a string value is taken as text, any other value as its JSON
text (``[1, 2]``, ``{"a": 1}``, ``true``), which the engine reads too."""

from __future__ import annotations

import csv
import glob
import io
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMATS = ("csv", "json", "parquet", "arrow")
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".jsonl": "json",
    ".ndjson": "json",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
}


def pyarrow():
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError("turbocql's bulk tools need pyarrow: pip install 'turbocql[bulk]' (or pyarrow)") from None
    return pa


def format_of(path: str | None, given: str | None) -> str:
    """The format asked for, else the one the file name says, else CSV."""
    if given:
        if given not in FORMATS:
            raise ValueError("unknown format %r (formats: %s)" % (given, ", ".join(FORMATS)))
        return given
    if path and path != "-":
        return _EXTENSIONS.get(Path(path).suffix.lower(), "csv")
    return "csv"


def expand(source: str) -> list[str]:
    """A file, a directory (its files, sorted), a glob, or ``-`` (stdin)."""
    if source == "-":
        return ["-"]
    if os.path.isdir(source):
        files = sorted(str(p) for p in Path(source).iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            raise FileNotFoundError("directory %s holds no files" % source)
        return files
    if any(c in source for c in "*?["):
        files = sorted(glob.glob(source))
        if not files:
            raise FileNotFoundError("no file matches %s" % source)
        return files
    if not os.path.exists(source):
        raise FileNotFoundError("no such file: %s" % source)
    return [source]


@dataclass
class CsvOptions:
    header: bool = True
    delimiter: str = ","
    quote: str = '"'
    escape: str | None = None
    null: str = ""
    skip_rows: int = 0


@dataclass
class Chunk:
    """Some records of one input: its name, the number of its first record (1-based, data
    records only), the line that record starts on (exact unless a field spans lines), and
    the records as a record batch."""

    source: str
    first_record: int
    first_line: int
    batch: Any
    # Records that could not be read (index in the batch, reason): a JSON line that is not
    # an object. They stand in the batch as empty records, and are never sent.
    unparsable: list[tuple[int, str]] = field(default_factory=list)
    # Bytes of the input read so far (None: not known).
    position: int | None = None


def _open_binary(path: str):
    return sys.stdin.buffer if path == "-" else open(path, "rb")


def read_chunks(path: str, fmt: str, csv_opts: CsvOptions, names: list[str] | None, batch_rows: int) -> Iterator[Chunk]:
    """The records of one input, a batch at a time. ``names``: the column names of a CSV
    file without a header line."""
    if fmt == "csv":
        yield from _csv_chunks(path, csv_opts, names, batch_rows)
    elif fmt == "json":
        yield from _json_chunks(path, batch_rows)
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        pyarrow()
        record = 1
        for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows):
            yield Chunk(path, record, record, batch)
            record += batch.num_rows
    else:
        pa = pyarrow()
        record = 1
        with pa.memory_map(path) if path != "-" else pa.input_stream(sys.stdin.buffer) as f:
            try:
                reader = pa.ipc.open_file(f)
                batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
            except pa.ArrowInvalid:
                f.seek(0)
                batches = iter(pa.ipc.open_stream(f))
            for batch in batches:
                yield Chunk(path, record, record, batch)
                record += batch.num_rows


def _csv_chunks(path: str, o: CsvOptions, names: list[str] | None, batch_rows: int) -> Iterator[Chunk]:
    pa = pyarrow()
    import pyarrow.csv as pcsv

    f = _open_binary(path)
    try:
        line = 1
        for _ in range(o.skip_rows):
            f.readline()
            line += 1
        if o.header:
            first = f.readline().decode("utf-8-sig")
            line += 1
            header = next(csv.reader([first], delimiter=o.delimiter, quotechar=o.quote), [])
            names = [h.strip() for h in header]
            if not names:
                return
        if not names:
            raise ValueError("%s: no header line and no column names" % path)
        reader = pcsv.open_csv(
            f,
            read_options=pcsv.ReadOptions(column_names=names, block_size=1 << 22, use_threads=True),
            parse_options=pcsv.ParseOptions(
                delimiter=o.delimiter,
                quote_char=o.quote or False,
                escape_char=o.escape or False,
                newlines_in_values=True,
            ),
            convert_options=pcsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                null_values=[o.null],
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
            ),
        )
        record = 1
        for batch in reader:
            for start in range(0, batch.num_rows, batch_rows):
                part = batch.slice(start, batch_rows)
                yield Chunk(path, record, line + record - 1, part, position=_tell(f))
                record += part.num_rows
    except pa.ArrowInvalid as e:
        raise ValueError("%s: %s" % (path, e)) from None
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def _tell(f) -> int | None:
    try:
        return f.tell()
    except (OSError, ValueError):
        return None


def _json_chunks(path: str, batch_rows: int) -> Iterator[Chunk]:
    pa = pyarrow()
    f = _open_binary(path)
    text = io.TextIOWrapper(f, encoding="utf-8")
    try:
        rows: list[dict] = []
        bad: list[tuple[int, str]] = []
        record = line = first_line = 1
        for raw in text:
            stripped = raw.strip()
            if stripped:
                try:
                    obj = json.loads(stripped)
                    if not isinstance(obj, dict):
                        raise ValueError("a JSON line must be an object, got %s" % type(obj).__name__)
                    rows.append({k: v if v is None or isinstance(v, str) else json.dumps(v) for k, v in obj.items()})
                except ValueError as e:
                    rows.append({})
                    bad.append((len(rows) - 1, "not a JSON object: %s" % e))
            line += 1
            if len(rows) >= batch_rows:
                yield _json_chunk(pa, path, record, first_line, rows, bad)
                record += len(rows)
                rows, bad, first_line = [], [], line
        if rows:
            yield _json_chunk(pa, path, record, first_line, rows, bad)
    finally:
        if f is sys.stdin.buffer:
            text.detach()
        else:
            text.close()


def _json_chunk(pa, path, record, first_line, rows, bad) -> Chunk:
    names: dict[str, None] = {}
    for r in rows:
        names.update(dict.fromkeys(r))
    batch = pa.RecordBatch.from_pydict({n: pa.array([r.get(n) for r in rows], pa.string()) for n in names})
    if not names:
        batch = pa.RecordBatch.from_pydict({"": pa.nulls(len(rows), pa.string())})
    return Chunk(path, record, first_line, batch, bad)


class Writer:
    """Writes record batches to one output: a file, or ``-`` (stdout)."""

    def __init__(self, path: str, fmt: str, header: bool = True, delimiter: str = ",", json_raw=frozenset()):
        """``json_raw``: the columns written to JSON lines as numbers or booleans."""
        self.path, self.fmt, self.header, self.delimiter = path, fmt, header, delimiter
        self.json_raw = json_raw
        # "-": the process's standard output (its bytes, under whatever sys.stdout is now:
        # a notebook's or doctest's has no buffer), flushed at the end but never closed.
        self._owns_sink = path != "-"
        self._sink: Any = open(path, "wb") if self._owns_sink else getattr(sys.stdout, "buffer", None)
        if self._sink is None:
            self._sink = os.fdopen(os.dup(1), "wb")
            self._owns_sink = True  # a duplicate of descriptor 1: closing it leaves stdout open
        self._writer: Any = None
        self.bytes = 0

    def write(self, batch) -> None:
        pa = pyarrow()
        if self._writer is None:
            self._writer = self._open(pa, batch.schema)
        if self.fmt == "json":
            self._write_json(batch)
        else:
            self._writer.write_batch(batch)
        self._count()

    def _open(self, pa, schema):
        if self.fmt == "csv":
            import pyarrow.csv as pcsv

            return pcsv.CSVWriter(
                self._sink,
                schema,
                write_options=pcsv.WriteOptions(
                    include_header=self.header, delimiter=self.delimiter, quoting_style="needed"
                ),
            )
        if self.fmt == "parquet":
            import pyarrow.parquet as pq

            return pq.ParquetWriter(self._sink, schema)
        if self.fmt == "arrow":
            return pa.ipc.new_file(self._sink, schema)
        return True  # json: written here

    def _write_json(self, batch) -> None:
        raw = self.json_raw
        names = batch.schema.names
        out = []
        for row in zip(*(c.to_pylist() for c in batch.columns), strict=True):
            obj = {}
            for name, v in zip(names, row, strict=True):
                if v is not None and name in raw:
                    obj[name] = _json_number(v)
                else:
                    obj[name] = v
            out.append(json.dumps(obj, ensure_ascii=False))
        self._sink.write(("\n".join(out) + "\n").encode("utf-8"))

    def _count(self) -> None:
        try:
            self.bytes = self._sink.tell()
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        if self._writer is not None and self._writer is not True:
            self._writer.close()
        self._count()
        if self._owns_sink:
            self._sink.close()
        else:
            self._sink.flush()


def _json_number(text: str):
    """A number or boolean column's CQL text as its JSON value (NaN and infinities stay
    strings: JSON has no such numbers)."""
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        f = float(text)
    except ValueError:
        return text
    return f if f == f and f not in (float("inf"), float("-inf")) else text
