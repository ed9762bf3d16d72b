//! Response frames as the connection reads them: header and body with the length cap, the
//! body's extensions (decompression, capped too, tracing id, warnings, custom payload), then
//! the response deserialized and a RESULT's metadata read, as the crate does for every frame.
//! The first byte picks the cap and the negotiated compression; the rest is the stream, read
//! frame after frame until it fails.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scylla_cql::frame::protocol_features::ProtocolFeatures;
use scylla_cql::frame::response::Response;
use scylla_cql::frame::{parse_response_body_extensions, read_response_frame_with_limit, set_max_response_frame_length, Compression};

fuzz_target!(|data: &[u8]| {
    let Some((ctl, mut stream)) = data.split_first() else { return };
    let limit = [256 << 20, 64 << 10, 1 << 10, 16][usize::from(ctl & 3)];
    let compression = [None, Some(Compression::Lz4), Some(Compression::Snappy), None][usize::from((ctl >> 2) & 3)];
    // The process-wide cap (decompressed lengths are held to it).
    set_max_response_frame_length(limit);
    let features = ProtocolFeatures::default();
    futures::executor::block_on(async {
        while let Ok((params, opcode, body)) = read_response_frame_with_limit(&mut stream, limit).await {
            assert!(body.len() <= limit, "a body of {} bytes passed the limit of {limit}", body.len());
            let Ok(ext) = parse_response_body_extensions(params.flags, compression, body) else { continue };
            assert!(ext.body.len() <= limit, "a decompressed body of {} bytes passed the limit of {limit}", ext.body.len());
            if let Ok(response) = Response::deserialize(&features, opcode, ext.body, None) {
                let _ = response.deserialize_metadata();
            }
        }
    });
});
