"""The DSE geometric values, as the classic driver's classes (re-exported by
``turbocql.util``): :class:`Point`, :class:`LineString`, :class:`Polygon` (with their
well-known text, ``str`` and ``from_wkt``) and :class:`Distance`.
"""

import math
import re


def list_contents_to_tuple(to_convert):
    """A list as a tuple, the lists directly in it too (one level, as the classic
    function); any other value as it is."""
    if isinstance(to_convert, list):
        return tuple(tuple(item) if isinstance(item, list) else item for item in to_convert)
    return to_convert


def _wkt_number(text):
    return float(text)


_WKT_RE = re.compile(r"^\s*(POINT|LINESTRING|POLYGON)\s*(EMPTY|\(.*\))\s*$", re.IGNORECASE | re.DOTALL)


def _wkt_parse(cls, kind, text):
    m = _WKT_RE.match(text)
    if not m:
        raise ValueError("Invalid WKT geometry: '%s'" % (text,))
    found = m.group(1).upper()
    if found != kind:
        names = {"POINT": "Point", "LINESTRING": "LineString", "POLYGON": "Polygon"}
        raise ValueError("Invalid WKT geometry type. Expected '%s', got '%s': '%s'" % (names[kind], names[found], text))
    body = m.group(2)
    return None if body.upper() == "EMPTY" else body.strip()[1:-1]


def _wkt_points(text):
    return tuple(tuple(_wkt_number(c) for c in point.split()) for point in text.split(","))


def _wkt_coords(coords):
    return ", ".join("%r %r" % (x, y) for x, y in coords)


class Point:
    """A point (x, y): a DSE ``PointType`` value."""

    def __init__(self, x=math.nan, y=math.nan):
        self.x = x
        self.y = y

    def __eq__(self, other):
        return isinstance(other, Point) and self.x == other.x and self.y == other.y

    def __hash__(self):
        return hash((self.x, self.y))

    def __str__(self):
        return "POINT (%r %r)" % (self.x, self.y)

    def __repr__(self):
        return "%s(%r, %r)" % (self.__class__.__name__, self.x, self.y)

    @staticmethod
    def from_wkt(s):
        """A Point from its well-known text (``POINT (1 2)``)."""
        body = _wkt_parse(Point, "POINT", s)
        if body is None:
            return Point(math.nan, math.nan)
        (x, y) = _wkt_points(body)[0]
        return Point(x, y)


class LineString:
    """A line through points ((x, y), ...): a DSE ``LineStringType`` value."""

    def __init__(self, coords=()):
        self.coords = tuple(coords)

    def __eq__(self, other):
        return isinstance(other, LineString) and self.coords == other.coords

    def __hash__(self):
        return hash(self.coords)

    def __str__(self):
        return "LINESTRING EMPTY" if not self.coords else "LINESTRING (%s)" % _wkt_coords(self.coords)

    def __repr__(self):
        return "%s(%r)" % (self.__class__.__name__, self.coords)

    @staticmethod
    def from_wkt(s):
        """A LineString from its well-known text (``LINESTRING (1 2, 3 4)``)."""
        body = _wkt_parse(LineString, "LINESTRING", s)
        return LineString() if body is None else LineString(_wkt_points(body))


class _LinearRing:
    def __init__(self, coords=()):
        self.coords = list_contents_to_tuple([tuple(c) for c in coords])

    def __eq__(self, other):
        return isinstance(other, _LinearRing) and self.coords == other.coords

    def __hash__(self):
        return hash(self.coords)

    def __str__(self):
        return "LINEARRING EMPTY" if not self.coords else "LINEARRING (%s)" % _wkt_coords(self.coords)

    def __repr__(self):
        return "%s(%r)" % (self.__class__.__name__, self.coords)


class Polygon:
    """A polygon: an exterior ring and interior rings (holes), each a sequence of
    (x, y); a DSE ``PolygonType`` value."""

    def __init__(self, exterior=(), interiors=None):
        self.exterior = _LinearRing(exterior)
        self.interiors = tuple(_LinearRing(ring) for ring in interiors) if interiors else ()

    def __eq__(self, other):
        return isinstance(other, Polygon) and self.exterior == other.exterior and self.interiors == other.interiors

    def __hash__(self):
        return hash((self.exterior, self.interiors))

    def __str__(self):
        if not self.exterior.coords:
            return "POLYGON EMPTY"
        rings = [self.exterior.coords] + [ring.coords for ring in self.interiors]
        return "POLYGON (%s)" % ", ".join("(%s)" % _wkt_coords(ring) for ring in rings)

    def __repr__(self):
        return "%s(%r, %r)" % (self.__class__.__name__, self.exterior.coords, [r.coords for r in self.interiors])

    @staticmethod
    def from_wkt(s):
        """A Polygon from its well-known text (``POLYGON ((1 2, 3 4, 5 6, 1 2))``)."""
        body = _wkt_parse(Polygon, "POLYGON", s)
        if body is None:
            return Polygon()
        rings = [_wkt_points(ring) for ring in re.findall(r"\(([^()]*)\)", body)]
        return Polygon(rings[0], rings[1:])


class Distance:
    """A circle: a center (x, y) and a radius (DSE search predicates)."""

    def __init__(self, x=math.nan, y=math.nan, radius=math.nan):
        self.x = x
        self.y = y
        self.radius = radius

    def __eq__(self, other):
        return isinstance(other, Distance) and self.x == other.x and self.y == other.y and self.radius == other.radius

    def __hash__(self):
        return hash((self.x, self.y, self.radius))

    def __str__(self):
        return "DISTANCE ((%r %r) %r)" % (self.x, self.y, self.radius)

    def __repr__(self):
        return "%s(%r, %r, %r)" % (self.__class__.__name__, self.x, self.y, self.radius)
