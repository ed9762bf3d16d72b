//! EVENT bodies (topology, status and schema changes) as the crate reads them from the
//! control connection, in both of its event forms.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scylla_cql::frame::response::event::{Event, EventV2};

fuzz_target!(|data: &[u8]| {
    let _ = Event::deserialize(&mut &data[..]);
    let _ = EventV2::deserialize(&mut &data[..]);
});
