//! The Stint runtime: a Substrate chain on which GPU compute is bought, sold and paid for.
//!
//! It holds the foundation (system, time, Aura + GRANDPA consensus, balances, fees and a
//! development-only sudo) and Stint's pallets from index 10: the provider registry and the provider
//! bonds. The market, leases and streams join them with their own indices.
#![cfg_attr(not(feature = "std"), no_std)]
// `construct_runtime` and `impl_runtime_apis` expand to large types.
#![recursion_limit = "256"]

#[cfg(feature = "std")]
include!(concat!(env!("OUT_DIR"), "/wasm_binary.rs"));

extern crate alloc;

pub mod apis;
#[cfg(feature = "runtime-benchmarks")]
mod benchmarks;
pub mod configs;
pub mod genesis_config_presets;
#[cfg(test)]
mod tests;
pub mod weights;

use alloc::{borrow::Cow, vec::Vec};
use polkadot_sdk::*;
use sp_runtime::{
	generic, impl_opaque_keys,
	traits::{BlakeTwo256, IdentifyAccount, Verify},
	MultiAddress, MultiSignature,
};
use sp_version::RuntimeVersion;

pub use frame_system::Call as SystemCall;
pub use pallet_balances::Call as BalancesCall;
#[cfg(feature = "std")]
pub use sp_runtime::BuildStorage;
pub use stint_primitives::{
	Balance, BlockNumber, Nonce, MICRO_STINT, MILLI_STINT, STINT, TOKEN_DECIMALS, TOKEN_SYMBOL,
};

/// Types the node needs without knowing the runtime's extrinsic format.
pub mod opaque {
	use super::*;
	pub use sp_runtime::OpaqueExtrinsic as UncheckedExtrinsic;

	/// Opaque block header type.
	pub type Header = generic::Header<BlockNumber, BlakeTwo256>;
	/// Opaque block type.
	pub type Block = generic::Block<Header, UncheckedExtrinsic>;
	/// Opaque block hash type.
	pub type Hash = <BlakeTwo256 as sp_runtime::traits::Hash>::Output;
}

impl_opaque_keys! {
	/// The keys a validator's node holds: Aura for authoring, GRANDPA for finality.
	pub struct SessionKeys {
		pub aura: Aura,
		pub grandpa: Grandpa,
	}
}

/// The runtime's version. Bump `spec_version` with every change to the runtime's logic and
/// `transaction_version` with every change to call or extension encoding, and the `next-spec`
/// version below with it.
#[cfg(not(feature = "next-spec"))]
#[sp_version::runtime_version]
pub const VERSION: RuntimeVersion = RuntimeVersion {
	spec_name: Cow::Borrowed("stint"),
	impl_name: Cow::Borrowed("stint-node"),
	authoring_version: 1,
	spec_version: 106,
	impl_version: 1,
	apis: apis::RUNTIME_API_VERSIONS,
	transaction_version: 3,
	system_version: 1,
};

/// The same runtime one spec version on (the `next-spec` feature): built only by `runtime/next`,
/// as the target of the tests' real runtime upgrades (`System::set_code` on a dev chain). Its
/// `spec_version` is always the one above plus one (the macro needs literals).
#[cfg(feature = "next-spec")]
#[sp_version::runtime_version]
pub const VERSION: RuntimeVersion = RuntimeVersion {
	spec_name: Cow::Borrowed("stint"),
	impl_name: Cow::Borrowed("stint-node"),
	authoring_version: 1,
	spec_version: 107,
	impl_version: 1,
	apis: apis::RUNTIME_API_VERSIONS,
	transaction_version: 3,
	system_version: 1,
};

/// Target block time. Aura's slot duration follows from it; it cannot change once a chain runs.
pub const MILLI_SECS_PER_BLOCK: u64 = 6000;
/// Aura slot duration.
pub const SLOT_DURATION: u64 = MILLI_SECS_PER_BLOCK;

/// Blocks per minute, hour and day at the target block time.
pub const MINUTES: BlockNumber = 60_000 / (MILLI_SECS_PER_BLOCK as BlockNumber);
pub const HOURS: BlockNumber = MINUTES * 60;
pub const DAYS: BlockNumber = HOURS * 24;

/// The smallest balance an account may hold.
pub const EXISTENTIAL_DEPOSIT: Balance = MILLI_STINT;

/// Transaction signature: sr25519, ed25519 or ecdsa.
pub type Signature = MultiSignature;
/// An account is identified by the public key its transactions are signed with.
pub type AccountId = <<Signature as Verify>::Signer as IdentifyAccount>::AccountId;
/// A hash of some data used by the chain.
pub type Hash = sp_core::H256;
/// The address format for describing accounts.
pub type Address = MultiAddress<AccountId, ()>;
/// Block header type as expected by this runtime.
pub type Header = generic::Header<BlockNumber, BlakeTwo256>;
/// Block type as expected by this runtime.
pub type Block = generic::Block<Header, UncheckedExtrinsic>;

/// The transaction extensions every signed transaction carries, in this order.
pub type TxExtension = (
	frame_system::AuthorizeCall<Runtime>,
	frame_system::CheckNonZeroSender<Runtime>,
	frame_system::CheckSpecVersion<Runtime>,
	frame_system::CheckTxVersion<Runtime>,
	frame_system::CheckGenesis<Runtime>,
	frame_system::CheckEra<Runtime>,
	frame_system::CheckNonce<Runtime>,
	frame_system::CheckWeight<Runtime>,
	pallet_transaction_payment::ChargeTransactionPayment<Runtime>,
	frame_metadata_hash_extension::CheckMetadataHash<Runtime>,
	frame_system::WeightReclaim<Runtime>,
);

/// Unchecked extrinsic type as expected by this runtime.
pub type UncheckedExtrinsic =
	generic::UncheckedExtrinsic<Address, RuntimeCall, Signature, TxExtension>;

/// The payload being signed in transactions.
pub type SignedPayload = generic::SignedPayload<RuntimeCall, TxExtension>;

/// Migrations beyond those the pallets declare themselves.
type Migrations = ();

/// Executive: dispatches calls to the pallets.
pub type Executive = frame_executive::Executive<
	Runtime,
	Block,
	frame_system::ChainContext<Runtime>,
	Runtime,
	AllPalletsWithSystem,
	Migrations,
>;

/// The Stint runtime. Every pallet has an explicit, stable index: clients encode calls with it.
#[frame_support::runtime]
mod runtime {
	#[runtime::runtime]
	#[runtime::derive(
		RuntimeCall,
		RuntimeEvent,
		RuntimeError,
		RuntimeOrigin,
		RuntimeFreezeReason,
		RuntimeHoldReason,
		RuntimeSlashReason,
		RuntimeLockId,
		RuntimeTask,
		RuntimeViewFunction
	)]
	pub struct Runtime;

	#[runtime::pallet_index(0)]
	pub type System = frame_system;

	#[runtime::pallet_index(1)]
	pub type Timestamp = pallet_timestamp;

	#[runtime::pallet_index(2)]
	pub type Aura = pallet_aura;

	#[runtime::pallet_index(3)]
	pub type Grandpa = pallet_grandpa;

	#[runtime::pallet_index(4)]
	pub type Balances = pallet_balances;

	#[runtime::pallet_index(5)]
	pub type TransactionPayment = pallet_transaction_payment;

	/// Development only: the `development` and `local_testnet` presets give Alice the key.
	#[runtime::pallet_index(6)]
	pub type Sudo = pallet_sudo;

	/// Batches of calls (`batch_all`: all or nothing), e.g. a provider's info and hardware.
	#[runtime::pallet_index(7)]
	pub type Utility = pallet_utility;

	/// Settings root may change while the chain runs: lease and stream deadlines.
	#[runtime::pallet_index(8)]
	pub type Parameters = pallet_parameters;

	/// The registry of providers and their GPUs.
	#[runtime::pallet_index(10)]
	pub type Providers = pallet_providers;

	/// Providers' bonds: collateral for leases, slashable.
	#[runtime::pallet_index(11)]
	pub type Bonds = pallet_bonds;

	/// Orders and bids: a reverse auction for GPU time.
	#[runtime::pallet_index(12)]
	pub type Market = pallet_market;

	/// Leases: from an accepted bid to a signed result.
	#[runtime::pallet_index(13)]
	pub type Leases = pallet_leases;

	/// Escrow that pays by the block.
	#[runtime::pallet_index(14)]
	pub type Streams = pallet_streams;
}
