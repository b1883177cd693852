//! A lease and where it is in its life.

use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use frame::prelude::*;
use scale_info::TypeInfo;
use stint_primitives::{DeviceId, LeaseId, ResultCommitment};
use stint_traits::buckets::Slot;
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
	/// A replica ended by its sealed result: its devices are free, its payment stopped; it is
	/// `Completed` or `Failed` once revealed, and stays sealed if it never is (slashed when its
	/// order's replicas are decided).
	Sealed,
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
	/// Blocks the buyer has to judge each result and checkpoint, during which its holdback
	/// (and, after the result, the collateral) stays held: the chain's `VerdictWindow` when
	/// the lease was created, or the longer one the order asked for.
	pub verdict_window: BlockNumber,
	/// Checkpoints accepted so far (open-ended leases).
	pub checkpoints: u32,
	/// The order promised deterministic outputs: the buyer may dispute the result.
	pub deterministic: bool,
	/// A verification lease re-executes the disputed result of this lease: its own result
	/// decides the dispute instead of waiting for a verdict.
	pub verifies: Option<LeaseId>,
	/// How many replicas its order runs. Above 1, this lease is one of them: it ends by a
	/// sealed result (`commit_result`), revealed once every replica committed, and the
	/// replicas' majority decides its verdict (see [`ReplicaGroup`]).
	pub replicas: u32,
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

/// The outcome of a lease that ended by its provider's result (or its provider's notice),
/// until the buyer accepts or objects or the verdict window passes. Meanwhile the lease's
/// collateral stays locked and its holdback withheld.
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
pub struct PendingVerdict<Balance, BlockNumber> {
	/// What the result says: `Completed` or `Failed`.
	pub outcome: stint_primitives::Outcome,
	/// How much of a full outcome it counts (what the lease delivered).
	pub weight: Permill,
	/// The last block in which the buyer may object.
	pub objections_until: BlockNumber,
	/// The provider's bond still locked for the lease, unlocked by the verdict.
	pub collateral: Balance,
	/// Slashed from it if the buyer objects: the provider ended the lease before its end (or
	/// soon after acknowledging it). Zero for a result at the end.
	pub at_stake: Balance,
	/// How the provider ended the lease: by its result, or by `terminate` after its notice.
	pub ended_by: EndedBy,
}

/// How a lease whose verdict is pending ended.
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
pub enum EndedBy {
	/// The provider's signed result. When the job ends is the buyer's job's doing as much as
	/// the provider's, so an objection to an early result punishes (the slash is burnt) but
	/// pays the buyer nothing: objecting never earns money.
	Result,
	/// The provider's `terminate` after its notice: its choice alone, so an objection also
	/// compensates the buyer (half the slash, and the holdback).
	Notice,
}

/// What a buyer's verdicts say about it: how many results it judged and how many it objected
/// to. Providers read it before they bid (a buyer who objects to everything is visible).
#[derive(
	Clone,
	Copy,
	Default,
	PartialEq,
	Eq,
	Debug,
	Encode,
	Decode,
	DecodeWithMemTracking,
	MaxEncodedLen,
	TypeInfo,
)]
pub struct BuyerRecord {
	/// Verdicts reached on its leases: accepted, confirmed or objected.
	pub verdicts: u32,
	/// Of them, objections.
	pub objections: u32,
	/// Of them, objections that slashed a provider.
	pub slashing_objections: u32,
	/// Disputes it opened.
	pub disputes: u32,
	/// Of them, disputes the re-execution decided for the provider: the result stood. (One
	/// decided for the buyer counts as a verdict, not as an objection.)
	pub disputes_lost: u32,
	/// Replicated orders of its whose replicas found no majority: a job that promised to be
	/// deterministic and was not, or replicas that failed it.
	pub no_majority: u32,
}

/// The pending verdict type for a runtime.
pub type PendingVerdictOf<T> =
	PendingVerdict<<T as crate::Config>::Balance, frame_system::pallet_prelude::BlockNumberFor<T>>;

/// The most verifiers a dispute draws (a drawn verifier that does not deliver, or none to be
/// found, takes another draw): then the dispute is void.
pub const MAX_DISPUTE_DRAWS: u32 = 3;

/// Where a dispute is.
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
pub enum DisputeStatus<BlockNumber> {
	/// A verifier is drawn at the start of this block, from its parent's hash.
	Drawing { at: BlockNumber },
	/// This verification lease re-executes the job.
	Verifying { lease: LeaseId },
	/// The re-execution produced the same outputs: the result stood, the buyer lost.
	Upheld,
	/// The re-execution produced other outputs: the provider was slashed, the buyer refunded.
	Overturned,
	/// No verifier delivered within the draws: everyone was refunded, the result stood.
	Void,
}

/// A buyer's dispute of a deterministic lease's result: its bond pays the verifier.
#[derive(
	Clone, PartialEq, Eq, Debug, Encode, Decode, DecodeWithMemTracking, MaxEncodedLen, TypeInfo,
)]
pub struct Dispute<Balance, BlockNumber> {
	/// The bond: escrow of the stream that pays the verifier at the disputed lease's price.
	pub bond: Balance,
	/// That stream: pending (paying nobody) until a verifier is drawn; a new one after a
	/// verifier that did not deliver.
	pub stream: StreamId,
	pub opened_at: BlockNumber,
	/// Verifiers drawn, or draws that found none.
	pub draws: u32,
	pub status: DisputeStatus<BlockNumber>,
	/// Where the next draw waits in the draw queue.
	pub slot: Option<Slot<BlockNumber>>,
	/// The verification leases, pruned with the disputed lease.
	pub verifiers: BoundedVec<LeaseId, ConstU32<MAX_DISPUTE_DRAWS>>,
}

impl<Balance, BlockNumber> Dispute<Balance, BlockNumber> {
	/// Whether it is still to be decided.
	pub fn is_open(&self) -> bool {
		matches!(self.status, DisputeStatus::Drawing { .. } | DisputeStatus::Verifying { .. })
	}
}

/// The dispute type for a runtime.
pub type DisputeOf<T> =
	Dispute<<T as crate::Config>::Balance, frame_system::pallet_prelude::BlockNumberFor<T>>;

/// How a replicated order's replicas were decided.
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
pub enum ReplicaVerdict {
	/// More than half of the replicas revealed this output root and exit code: they were paid;
	/// every other replica that committed was slashed, the buyer compensated.
	Majority { output_root: [u8; 32], exit_code: i32, votes: u32 },
	/// No result had more than half of the replicas: what each replica that revealed was paid
	/// went back to the buyer, nobody was slashed for its result (a replica that did not reveal
	/// was), and the order is flagged on the buyer's record.
	NoMajority,
	/// Replica `lease` alone revealed a result, every other replica having ended without one
	/// (closed by the buyer, a no-show, unrevealed): nothing confirms nor contradicts it, so it
	/// waits for the buyer's verdict like the result of an order of one replica (accepted,
	/// objected to, disputed, or confirmed once its window passes). Replicas that committed and
	/// did not reveal were slashed.
	Alone { lease: LeaseId, output_root: [u8; 32], exit_code: i32 },
}

/// Where a replicated order's replicas are.
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
pub enum ReplicaStatus<BlockNumber> {
	/// Running, committing or revealing.
	Open,
	/// Decided in block `at`.
	Decided { at: BlockNumber, verdict: ReplicaVerdict },
}

/// One replica: its lease and the seal it committed.
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
pub struct Replica {
	pub lease: LeaseId,
	/// `stint_primitives::seal` of its result, once committed.
	pub seal: Option<[u8; 32]>,
}

/// The replicas of a replicated order: committed sealed results, then revealed ones, then the
/// majority's decision.
#[derive(
	Clone, PartialEq, Eq, Debug, Encode, Decode, DecodeWithMemTracking, MaxEncodedLen, TypeInfo,
)]
pub struct ReplicaGroup<BlockNumber> {
	/// One per replica, in lease order.
	pub replicas: BoundedVec<Replica, ConstU32<{ stint_primitives::MAX_REPLICAS }>>,
	/// The first block of the reveals: the block after the last any replica could commit in
	/// (the latest acknowledgement, the duration and the result grace), or, when every replica
	/// ended before that, the block the last one did.
	pub reveals_from: BlockNumber,
	/// The last block of the reveals: `RevealWindow` blocks after their first.
	pub reveal_until: BlockNumber,
	pub status: ReplicaStatus<BlockNumber>,
}

/// The replica group type for a runtime.
pub type ReplicaGroupOf<T> = ReplicaGroup<frame_system::pallet_prelude::BlockNumberFor<T>>;
