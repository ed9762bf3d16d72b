"""The classic driver's protocol message classes (``cassandra.protocol``'s
``QueryMessage``, ``ExecuteMessage``, ``BatchMessage``, ``ResultMessage``) and result
kinds, as values: ``turbocql.protocol`` re-exports them, ``ResponseFuture.message`` is
made of them (:func:`_message_of`)."""

from turbocql.cqltypes import (
    AsciiType,
    BooleanType,
    BytesType,
    ByteType,
    CounterColumnType,
    DateType,
    DecimalType,
    DoubleType,
    DurationType,
    FloatType,
    InetAddressType,
    Int32Type,
    IntegerType,
    ListType,
    LongType,
    MapType,
    SetType,
    ShortType,
    SimpleDateType,
    TimeType,
    TimeUUIDType,
    TupleType,
    UserType,
    UTF8Type,
    UUIDType,
    VarcharType,
)
from turbocql.query import BatchType as _BatchType

# The message classes of the protocol, as values. The engine writes and reads every frame
# itself: nothing in turbocql sends a QueryMessage or makes a ResultMessage (a
# ResponseFuture's ``message`` is a copy of what the engine sent) (there is no
# connection object to send one on), and a session's client_protocol_handler cannot swap
# them (see _check_protocol_handler). They are here for code that imports them or reads
# ResultMessage.type_codes (the protocol's type codes -> turbocql.cqltypes classes).

CUSTOM_TYPE = object()

RESULT_KIND_VOID = 0x0001
RESULT_KIND_ROWS = 0x0002
RESULT_KIND_SET_KEYSPACE = 0x0003
RESULT_KIND_PREPARED = 0x0004
RESULT_KIND_SCHEMA_CHANGE = 0x0005


class _MessageType:
    opcode: int | None = None
    name: str | None = None
    tracing = False
    custom_payload = None
    warnings = None

    def update_custom_payload(self, other):
        if other:
            if not self.custom_payload:
                self.custom_payload = {}
            self.custom_payload.update(other)

    def __repr__(self):
        return "<%s(%s)>" % (self.__class__.__name__, ", ".join("%s=%r" % item for item in vars(self).items()))


class QueryMessage(_MessageType):
    """A QUERY request's fields (the classic class's constructor); never sent by turbocql."""

    opcode = 0x07
    name = "QUERY"

    def __init__(
        self,
        query,
        consistency_level,
        serial_consistency_level=None,
        fetch_size=None,
        paging_state=None,
        timestamp=None,
        continuous_paging_options=None,
        keyspace=None,
    ):
        self.query = query
        self.query_params = None
        self.consistency_level = consistency_level
        self.serial_consistency_level = serial_consistency_level
        self.fetch_size = fetch_size
        self.paging_state = paging_state
        self.timestamp = timestamp
        self.skip_meta = False
        self.continuous_paging_options = continuous_paging_options
        self.keyspace = keyspace


class ExecuteMessage(_MessageType):
    """An EXECUTE request's fields (the classic class's constructor); never sent by turbocql."""

    opcode = 0x0A
    name = "EXECUTE"

    def __init__(
        self,
        query_id,
        query_params,
        consistency_level,
        serial_consistency_level=None,
        fetch_size=None,
        paging_state=None,
        timestamp=None,
        skip_meta=False,
        continuous_paging_options=None,
        result_metadata_id=None,
    ):
        self.query_id = query_id
        self.query_params = query_params
        self.consistency_level = consistency_level
        self.serial_consistency_level = serial_consistency_level
        self.fetch_size = fetch_size
        self.paging_state = paging_state
        self.timestamp = timestamp
        self.skip_meta = skip_meta
        self.continuous_paging_options = continuous_paging_options
        self.result_metadata_id = result_metadata_id


class BatchMessage(_MessageType):
    """A BATCH request's fields (the classic class's constructor); never sent by turbocql."""

    opcode = 0x0D
    name = "BATCH"

    def __init__(
        self, batch_type, queries, consistency_level, serial_consistency_level=None, timestamp=None, keyspace=None
    ):
        self.batch_type = batch_type
        self.queries = queries
        self.consistency_level = consistency_level
        self.serial_consistency_level = serial_consistency_level
        self.timestamp = timestamp
        self.keyspace = keyspace


def _message_of(sent, paging_state=None):
    """The classic message object of an engine request's frame fields
    (``_engine.SentRequest``): what ``ResponseFuture.message`` gives. The bound values and a
    batch's statements stay in the engine (``query_params`` / ``queries`` None)."""
    if sent.opcode_name == "BATCH":
        batch_type = {t.value: t for t in (_BatchType.LOGGED, _BatchType.UNLOGGED, _BatchType.COUNTER)}[sent.batch_type]
        return BatchMessage(batch_type, None, sent.consistency_level, sent.serial_consistency_level, sent.timestamp)
    if sent.opcode_name == "EXECUTE":
        message = ExecuteMessage(
            sent.query_id,
            None,
            sent.consistency_level,
            sent.serial_consistency_level,
            sent.fetch_size,
            paging_state,
            sent.timestamp,
        )
        message.query = sent.query
        return message
    return QueryMessage(
        sent.query,
        sent.consistency_level,
        sent.serial_consistency_level,
        sent.fetch_size,
        paging_state,
        sent.timestamp,
    )


class ResultMessage(_MessageType):
    """A RESULT response's fields; ``type_codes`` maps the protocol's type codes to the
    :mod:`turbocql.cqltypes` classes. turbocql's results are decoded by the engine."""

    opcode = 0x08
    name = "RESULT"

    kind = None
    results = None
    paging_state = None

    type_codes = _cqltypes_by_code = {
        0x0000: CUSTOM_TYPE,
        0x0001: AsciiType,
        0x0002: LongType,
        0x0003: BytesType,
        0x0004: BooleanType,
        0x0005: CounterColumnType,
        0x0006: DecimalType,
        0x0007: DoubleType,
        0x0008: FloatType,
        0x0009: Int32Type,
        0x000A: UTF8Type,
        0x000B: DateType,
        0x000C: UUIDType,
        0x000D: VarcharType,
        0x000E: IntegerType,
        0x000F: TimeUUIDType,
        0x0010: InetAddressType,
        0x0011: SimpleDateType,
        0x0012: TimeType,
        0x0013: ShortType,
        0x0014: ByteType,
        0x0015: DurationType,
        0x0020: ListType,
        0x0021: MapType,
        0x0022: SetType,
        0x0030: UserType,
        0x0031: TupleType,
    }

    def __init__(self, kind):
        self.kind = kind
