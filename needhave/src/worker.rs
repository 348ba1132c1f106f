//! The Worker entry (wasm32 only). Written with the Worker target.
