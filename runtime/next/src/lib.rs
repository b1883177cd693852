//! The Stint runtime one spec version on (`stint-runtime`'s `next-spec` feature), as a wasm blob:
//! what the tests hand to `System::set_code` to upgrade a dev chain for real. Natively this crate
//! is [`WASM_BINARY`] and nothing else; its wasm build is the runtime itself.

#![cfg_attr(not(feature = "std"), no_std)]

#[cfg(feature = "std")]
include!(concat!(env!("OUT_DIR"), "/wasm_binary.rs"));

#[cfg(all(not(feature = "std"), feature = "next-spec"))]
pub use stint_runtime::*;
