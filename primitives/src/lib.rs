//! Types both the Stint runtime and the software around it (the provider worker, the client and
//! the CLI) must agree on, byte for byte.
//!
//! Anything that is signed off-chain and verified on-chain (result commitments, checkpoints) is
//! defined here once, so the runtime and the worker cannot drift apart.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod fetch;
pub mod hardware;
pub mod job;
pub mod outputs;
pub mod receipt;
pub mod report;

pub use fetch::*;
pub use hardware::*;
pub use job::*;
pub use outputs::*;
pub use receipt::*;
pub use report::*;

/// Re-exported for the software around the runtime, which builds these types.
pub use polkadot_sdk::{
	sp_arithmetic::Permill,
	sp_core::{bounded::BoundedVec, ConstU32},
};

/// An account's balance, in the smallest unit (1 STINT = 10^12 units).
pub type Balance = u128;
/// A block number.
pub type BlockNumber = u32;
/// A transaction index (nonce).
pub type Nonce = u32;
/// Identifies a lease, from its creation to its end.
pub type LeaseId = u64;
/// The sr25519 public key a provider's worker signs results with. Distinct from the provider's
/// account, so the account's key can stay offline.
pub type WorkerKey = polkadot_sdk::sp_core::sr25519::Public;

/// The native token's symbol.
pub const TOKEN_SYMBOL: &str = "STINT";
/// The native token's number of decimals.
pub const TOKEN_DECIMALS: u8 = 12;
/// One STINT in the smallest unit.
pub const STINT: Balance = 10u128.pow(TOKEN_DECIMALS as u32);
/// A thousandth of a STINT.
pub const MILLI_STINT: Balance = STINT / 1_000;
/// A millionth of a STINT.
pub const MICRO_STINT: Balance = STINT / 1_000_000;

/// The SS58 address prefix (42, the generic Substrate prefix, until Stint registers its own).
pub const SS58_PREFIX: u16 = 42;

/// Why a provider's bond was slashed. Recorded in every slash event.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	codec::Encode,
	codec::Decode,
	codec::DecodeWithMemTracking,
	codec::MaxEncodedLen,
	scale_info::TypeInfo,
	serde::Serialize,
	serde::Deserialize,
)]
pub enum SlashReason {
	/// The provider did not acknowledge a lease before its deadline.
	NoShow,
	/// A fixed-duration lease ended without a result.
	MissedResult,
	/// An open-ended lease went too long without a checkpoint.
	MissedCheckpoint,
	/// The provider ended a lease without the notice the order required.
	TerminatedWithoutNotice,
	/// Governance (root) decided it.
	Governance,
	/// The provider ended a lease before its end (a terminate, an early result) and the buyer
	/// objected: slashed in proportion to the time it did not deliver.
	EndedEarly,
	/// The buyer disputed the result of a deterministic order and another provider's
	/// re-execution produced a different one: the result was false.
	FalseResult,
	/// A replica of a replicated order committed a sealed result and did not reveal it in
	/// time (or revealed one that does not open its seal).
	Unrevealed,
	/// A replica's revealed result disagreed with the majority of its order's replicas.
	OutvotedResult,
	/// A replicated order's replicas found no majority: what each was paid goes back to the
	/// buyer (nobody can tell which result was true), no collateral is slashed.
	NoMajority,
}

/// How a lease ended, from the provider's point of view. Feeds its reputation.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	codec::Encode,
	codec::Decode,
	codec::DecodeWithMemTracking,
	codec::MaxEncodedLen,
	scale_info::TypeInfo,
)]
pub enum Outcome {
	/// The lease completed with a result.
	Completed,
	/// The job ran and failed (a non-zero exit, reported honestly).
	Failed,
	/// The provider was slashed.
	Slashed,
	/// The provider never acknowledged the lease.
	NoShow,
	/// The buyer objected to a result that ended the lease early: counted as a failed delivery
	/// (no slash: nothing is proven).
	Objected,
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn units_are_consistent() {
		assert_eq!(STINT, 1_000_000_000_000);
		assert_eq!(MILLI_STINT * 1_000, STINT);
		assert_eq!(MICRO_STINT * 1_000_000, STINT);
	}
}
