//! Types: CQL type names, as CQL itself spells them (`list<int>`, `frozen<map<text, int>>`).
//!
//! Used in error messages and for `ResultSet.column_types` / `PreparedStatement` metadata.

use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};

/// A CQL `time` is nanoseconds since midnight, below this (Cassandra refuses any other).
pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Whether an empty value (zero bytes) of this type reads as null: every type but the three
/// whose empty value is a value (the empty text and bytes), as the classic driver's
/// `CassandraType.from_binary` reads it, at the top level and inside collections, tuples and
/// UDTs alike. A node stores such values (`{blobAsInt(0x): 5}`).
pub fn empty_reads_as_null(t: &ColumnType<'_>) -> bool {
    !matches!(t, ColumnType::Native(NativeType::Text | NativeType::Ascii | NativeType::Blob))
}

/// The CQL name of a native type.
pub fn native_name(t: &NativeType) -> &'static str {
    match t {
        NativeType::Ascii => "ascii",
        NativeType::Boolean => "boolean",
        NativeType::Blob => "blob",
        NativeType::Counter => "counter",
        NativeType::Date => "date",
        NativeType::Decimal => "decimal",
        NativeType::Double => "double",
        NativeType::Duration => "duration",
        NativeType::Float => "float",
        NativeType::Int => "int",
        NativeType::BigInt => "bigint",
        NativeType::Text => "text",
        NativeType::Timestamp => "timestamp",
        NativeType::Inet => "inet",
        NativeType::SmallInt => "smallint",
        NativeType::TinyInt => "tinyint",
        NativeType::Time => "time",
        NativeType::Timeuuid => "timeuuid",
        NativeType::Uuid => "uuid",
        NativeType::Varint => "varint",
        _ => "unknown",
    }
}

/// The CQL name of any column type.
pub fn type_name(t: &ColumnType) -> String {
    let frozen = |f: bool, s: String| if f { format!("frozen<{s}>") } else { s };
    match t {
        ColumnType::Native(n) => native_name(n).to_string(),
        ColumnType::Collection { frozen: f, typ } => {
            let inner = match typ {
                CollectionType::List(e) => format!("list<{}>", type_name(e)),
                CollectionType::Set(e) => format!("set<{}>", type_name(e)),
                CollectionType::Map(k, v) => format!("map<{}, {}>", type_name(k), type_name(v)),
                _ => "unknown".to_string(),
            };
            frozen(*f, inner)
        }
        ColumnType::Vector { typ, dimensions } => format!("vector<{}, {}>", type_name(typ), dimensions),
        ColumnType::UserDefinedType { frozen: f, definition } => frozen(*f, format!("{}.{}", definition.keyspace, definition.name)),
        ColumnType::Tuple(types) => {
            let parts: Vec<String> = types.iter().map(type_name).collect();
            format!("frozen<tuple<{}>>", parts.join(", "))
        }
        _ => "unknown".to_string(),
    }
}

/// The longest type name an error message quotes whole.
const MESSAGE_TYPE_NAME: usize = 80;

/// [`type_name`] for an error message: a name longer than 80 characters (a tuple of
/// thousands of fields, as a hostile server may declare) is cut, saying how long it was.
pub fn type_name_for_message(t: &ColumnType) -> String {
    let name = type_name(t);
    if name.len() <= MESSAGE_TYPE_NAME {
        return name;
    }
    let mut cut = MESSAGE_TYPE_NAME - 20;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} characters)", &name[..cut], name.len())
}
