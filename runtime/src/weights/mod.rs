//! Weights of the SDK pallets in the Stint runtime, measured on the runtime itself by
//! `scripts/bench-weights.sh` (Stint's own pallets keep theirs in `pallets/<name>/src/weights.rs`).

pub mod frame_system;
pub mod pallet_balances;
pub mod pallet_timestamp;
