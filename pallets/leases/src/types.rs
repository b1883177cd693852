//! A lease and where it is in its life.

use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use frame::prelude::*;
use scale_info::TypeInfo;
use stint_primitives::{DeviceId, ResultCommitment};
use stint_traits::{OrderId, StreamId};

/// Why a lease ended before (or without) a result.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub enum TerminationReason {
	/// The buyer closed it.
	ClosedByBuyer,
	/// The provider ended it after the notice the order asked for.
	ProviderNotice,
	/// The provider ended it without that notice (slashed).
	ProviderWithoutNotice,
	/// The provider never acknowledged it (slashed).
	NoShow,
	/// A fixed-duration lease ended without a result (slashed).
	MissedResult,
	/// An open-ended lease went too long without a checkpoint (slashed).
	MissedCheckpoint,
	/// Its stream ran out and was not topped up during the grace period.
	InsufficientFunds,
}

/// Where a lease is in its life.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub enum LeaseStatus {
	/// Created; the provider must acknowledge it by `ack_by`. Nothing is charged yet.
	AwaitingAck,
	/// The job runs and is paid by the block.
	Running,
	/// The stream ran out of escrow: nothing is charged; a top-up resumes it.
	Suspended,
	/// Ended with a result whose exit code is 0.
	Completed,
	/// Ended with a result whose exit code is not 0.
	Failed,
	/// Ended without a result.
	Terminated { reason: TerminationReason },
}

impl LeaseStatus {
	/// Whether the lease is still alive: its devices and collateral are committed.
	pub fn is_live(&self) -> bool {
		matches!(self, Self::AwaitingAck | Self::Running | Self::Suspended)
	}
}

/// A lease: a provider's devices running a buyer's order, paid through a stream.
#[derive(
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
	CloneNoBound,
	PartialEqNoBound,
	EqNoBound,
	DebugNoBound,
)]
#[scale_info(skip_type_params(MaxGpus))]
pub struct Lease<AccountId, Balance, BlockNumber, MaxGpus>
where
	AccountId: Clone + PartialEq + Eq + core::fmt::Debug,
	Balance: Clone + PartialEq + Eq + core::fmt::Debug,
	BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug,
	MaxGpus: Get<u32>,
{
	pub order: OrderId,
	pub buyer: AccountId,
	pub provider: AccountId,
	pub devices: BoundedVec<DeviceId, MaxGpus>,
	pub price_per_block: Balance,
	/// The payment stream, pending until the provider acknowledges.
	pub stream: StreamId,
	/// The provider's bond locked for this lease.
	pub collateral: Balance,
	/// The digest of the image the order pinned.
	pub image_digest: [u8; 32],
	pub created_at: BlockNumber,
	/// The last block in which the provider may acknowledge.
	pub ack_by: BlockNumber,
	pub started_at: Option<BlockNumber>,
	/// `Some(blocks)` for a fixed duration, `None` for open-ended.
	pub duration: Option<BlockNumber>,
	/// The end of a fixed-duration lease: `started_at + duration`.
	pub ends_at: Option<BlockNumber>,
	/// Blocks of notice the provider must give before ending it early.
	pub termination_notice: BlockNumber,
	/// When the provider's notice runs out, once given.
	pub notice_ends_at: Option<BlockNumber>,
	/// Blocks after `ends_at` in which the result may still land: the chain's `ResultGrace`
	/// when the lease was created (a later change applies to later leases).
	pub result_grace: BlockNumber,
	/// The most blocks between checkpoints of an open-ended lease: the chain's
	/// `CheckpointInterval` when the lease was created.
	pub checkpoint_interval: BlockNumber,
	/// Checkpoints accepted so far (open-ended leases).
	pub checkpoints: u32,
	/// The block of the last acknowledgement, checkpoint or resumption: the checkpoint clock.
	pub last_report_at: BlockNumber,
	/// The final result, or the latest checkpoint.
	pub result: Option<ResultCommitment>,
	pub status: LeaseStatus,
	pub ended_at: Option<BlockNumber>,
}

/// The lease type for a runtime.
pub type LeaseOf<T> = Lease<
	<T as frame_system::Config>::AccountId,
	<T as crate::Config>::Balance,
	frame_system::pallet_prelude::BlockNumberFor<T>,
	<T as crate::Config>::MaxGpusPerLease,
>;

/// The outcome of a lease its provider's result ended early, until the buyer accepts or objects
/// or the objection window passes.
#[derive(
	Clone,
	Copy,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub struct PendingVerdict<BlockNumber> {
	/// What the result says: `Completed` or `Failed`.
	pub outcome: stint_primitives::Outcome,
	/// How much of a full outcome it counts (what the lease delivered).
	pub weight: Permill,
	/// The last block in which the buyer may object.
	pub objections_until: BlockNumber,
}

/// The pending verdict type for a runtime.
pub type PendingVerdictOf<T> = PendingVerdict<frame_system::pallet_prelude::BlockNumberFor<T>>;
