"""The DSE types (re-exported by ``turbocql.cqltypes``): the geometric ``PointType``,
``LineStringType`` and ``PolygonType`` (well-known binary), and ``DateRangeType`` with its
:class:`BoundKind`.

Engine gap: the engine has no codec for DSE's custom types, so these convert their values
here (they have no ``_engine_type``, and collections of them are framed in Python).
"""

from __future__ import annotations

from turbocql import util
from turbocql._types.base import CassandraType
from turbocql.marshal import (
    int8_pack,
    int8_unpack,
    int64_pack,
    int64_unpack,
    point_be,
    point_le,
    uint32_le_pack,
)

_WKB_POINT, _WKB_LINESTRING, _WKB_POLYGON = 1, 2, 3


def _wkb_header(kind):
    return b"\x01" + uint32_le_pack(kind)


def _wkb_read(byts):
    little = byts[0] == 1
    order = "little" if little else "big"
    kind = int.from_bytes(byts[1:5], order)
    return little, order, kind, 5


def _wkb_doubles(byts, pos, count, little):
    fmt = point_le if little else point_be
    out = []
    for _ in range(count):
        out.append(fmt.unpack_from(byts, pos))
        pos += 16
    return out, pos


class PointType(CassandraType):
    typename = "PointType"

    @staticmethod
    def serialize(val, protocol_version):
        return _wkb_header(_WKB_POINT) + point_le.pack(val.x, val.y)

    @staticmethod
    def deserialize(byts, protocol_version):
        little, _, _, pos = _wkb_read(byts)
        x, y = (point_le if little else point_be).unpack_from(byts, pos)
        return util.Point(x, y)


class LineStringType(CassandraType):
    typename = "LineStringType"

    @staticmethod
    def serialize(val, protocol_version):
        coords = val.coords
        return _wkb_header(_WKB_LINESTRING) + uint32_le_pack(len(coords)) + b"".join(point_le.pack(*c) for c in coords)

    @staticmethod
    def deserialize(byts, protocol_version):
        little, order, _, pos = _wkb_read(byts)
        count = int.from_bytes(byts[pos : pos + 4], order)
        coords, _ = _wkb_doubles(byts, pos + 4, count, little)
        return util.LineString(coords)


class PolygonType(CassandraType):
    typename = "PolygonType"

    @staticmethod
    def serialize(val, protocol_version):
        rings = [val.exterior.coords] + [ring.coords for ring in val.interiors] if val.exterior.coords else []
        parts = [_wkb_header(_WKB_POLYGON), uint32_le_pack(len(rings))]
        for ring in rings:
            parts.append(uint32_le_pack(len(ring)))
            parts.extend(point_le.pack(*c) for c in ring)
        return b"".join(parts)

    @staticmethod
    def deserialize(byts, protocol_version):
        little, order, _, pos = _wkb_read(byts)
        nrings = int.from_bytes(byts[pos : pos + 4], order)
        pos += 4
        rings = []
        for _ in range(nrings):
            count = int.from_bytes(byts[pos : pos + 4], order)
            ring, pos = _wkb_doubles(byts, pos + 4, count, little)
            rings.append(ring)
        return util.Polygon(rings[0], rings[1:]) if rings else util.Polygon()


class BoundKind:
    """The kinds of DSE date range (the first byte of a ``DateRangeType`` value)."""

    SINGLE_DATE = "SINGLE_DATE"
    CLOSED_RANGE = "CLOSED_RANGE"
    OPEN_RANGE_HIGH = "OPEN_RANGE_HIGH"
    OPEN_RANGE_LOW = "OPEN_RANGE_LOW"
    BOTH_OPEN_RANGE = "BOTH_OPEN_RANGE"
    SINGLE_DATE_OPEN = "SINGLE_DATE_OPEN"

    VALID_RANGE_BOUNDS = (SINGLE_DATE, CLOSED_RANGE, OPEN_RANGE_HIGH, OPEN_RANGE_LOW, BOTH_OPEN_RANGE, SINGLE_DATE_OPEN)

    _bound_str_to_int_map = {name: i for i, name in enumerate(VALID_RANGE_BOUNDS)}
    _bound_int_to_str_map = dict(enumerate(VALID_RANGE_BOUNDS))

    @classmethod
    def to_int(cls, bound_str):
        return cls._bound_str_to_int_map[bound_str.upper()]

    @classmethod
    def to_str(cls, bound_int):
        return cls._bound_int_to_str_map[bound_int].upper()


class DateRangeType(CassandraType):
    typename = "daterange"

    _precision_str_to_int_map = {name: i for i, name in enumerate(util.DateRangePrecision.PRECISIONS)}
    _precision_int_to_str_map = dict(enumerate(util.DateRangePrecision.PRECISIONS))

    @classmethod
    def _encode_precision(cls, precision_str):
        try:
            return cls._precision_str_to_int_map[precision_str.upper()]
        except KeyError:
            raise ValueError(
                "%r is not a valid DateRange precision string. Valid values: %s"
                % (precision_str, ", ".join(cls._precision_str_to_int_map))
            ) from None

    @classmethod
    def _decode_precision(cls, precision_int):
        try:
            return cls._precision_int_to_str_map[precision_int]
        except KeyError:
            raise ValueError(
                "%s not a valid DateRange precision int. Valid values: %s"
                % (precision_int, ", ".join(str(i) for i in cls._precision_int_to_str_map))
            ) from None

    @classmethod
    def _bound_bytes(cls, bound):
        return int64_pack(bound.milliseconds) + int8_pack(cls._encode_precision(bound.precision))

    @classmethod
    def serialize(cls, v, protocol_version):
        open_bound = util.OPEN_BOUND
        try:
            value = v.value
        except AttributeError:
            raise ValueError(
                "%s.serialize expects an object with a value attribute; got %r" % (cls.__name__, v)
            ) from None
        if value is not None:
            if value == open_bound:
                return int8_pack(BoundKind.to_int(BoundKind.SINGLE_DATE_OPEN))
            return int8_pack(BoundKind.to_int(BoundKind.SINGLE_DATE)) + cls._bound_bytes(value)
        try:
            lower, upper = v.lower_bound, v.upper_bound
        except AttributeError:
            raise ValueError(
                "%s.serialize expects an object with lower_bound and upper_bound attributes; got %r" % (cls.__name__, v)
            ) from None
        if lower == open_bound and upper == open_bound:
            return int8_pack(BoundKind.to_int(BoundKind.BOTH_OPEN_RANGE))
        if upper == open_bound:
            return int8_pack(BoundKind.to_int(BoundKind.OPEN_RANGE_HIGH)) + cls._bound_bytes(lower)
        if lower == open_bound:
            return int8_pack(BoundKind.to_int(BoundKind.OPEN_RANGE_LOW)) + cls._bound_bytes(upper)
        return int8_pack(BoundKind.to_int(BoundKind.CLOSED_RANGE)) + cls._bound_bytes(lower) + cls._bound_bytes(upper)

    @classmethod
    def deserialize(cls, byts, protocol_version):
        kind = BoundKind.to_str(int8_unpack(byts[:1]))

        def bound(pos):
            return util.DateRangeBound(int64_unpack(byts[pos : pos + 8]), cls._decode_precision(byts[pos + 8]))

        if kind == BoundKind.SINGLE_DATE:
            return util.DateRange(value=bound(1))
        if kind == BoundKind.SINGLE_DATE_OPEN:
            return util.DateRange(value=util.OPEN_BOUND)
        if kind == BoundKind.BOTH_OPEN_RANGE:
            return util.DateRange(lower_bound=util.OPEN_BOUND, upper_bound=util.OPEN_BOUND)
        if kind == BoundKind.OPEN_RANGE_HIGH:
            return util.DateRange(lower_bound=bound(1), upper_bound=util.OPEN_BOUND)
        if kind == BoundKind.OPEN_RANGE_LOW:
            return util.DateRange(lower_bound=util.OPEN_BOUND, upper_bound=bound(1))
        return util.DateRange(lower_bound=bound(1), upper_bound=bound(10))
