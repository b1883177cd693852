//! The pallets `frame-omni-bencher` benchmarks in this runtime (with `runtime-benchmarks`): the
//! system pallets we rely on and every Stint pallet, against the runtime's real configuration.

use polkadot_sdk::*;

use crate::Runtime;

impl frame_system_benchmarking::Config for Runtime {}
impl frame_benchmarking::baseline::Config for Runtime {}

frame_benchmarking::define_benchmarks!(
	[frame_benchmarking, BaselineBench::<Runtime>]
	[frame_system, SystemBench::<Runtime>]
	[pallet_balances, Balances]
	[pallet_timestamp, Timestamp]
	[pallet_providers, Providers]
	[pallet_bonds, Bonds]
	[pallet_market, Market]
	[pallet_leases, Leases]
	[pallet_streams, Streams]
);
