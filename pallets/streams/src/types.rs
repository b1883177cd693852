//! A payment stream and its depositors.

use codec::{Decode, DecodeWithMemTracking, Encode, MaxEncodedLen};
use frame::prelude::*;
use scale_info::TypeInfo;
use stint_traits::buckets::Slot;

/// The most scheduled parts of a stream's holdback: a mark beyond them joins the latest (whose
/// release it shares, never earlier than asked).
pub const MAX_TRANCHES: u32 = 8;

/// Where a stream is in its life.
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
pub enum StreamStatus<BlockNumber> {
	/// Opened with its escrow held, not charging yet: waits for its owner to start it.
	Pending,
	/// Paying; the escrow runs out at `depletes_at`.
	Active { depletes_at: BlockNumber },
	/// Out of escrow: charges nothing, resumes on a top-up, closes at `grace_ends`.
	Suspended { grace_ends: BlockNumber },
	/// Settled and refunded.
	Closed,
}

/// What one account put into a stream, and what of it is still held.
#[derive(
	Clone, PartialEq, Eq, Debug, Encode, Decode, DecodeWithMemTracking, MaxEncodedLen, TypeInfo,
)]
pub struct Deposit<AccountId, Balance> {
	pub who: AccountId,
	pub deposited: Balance,
	pub remaining: Balance,
}

/// A stream of payment by the block.
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
#[scale_info(skip_type_params(MaxDepositors))]
pub struct Stream<AccountId, Balance, BlockNumber, MaxDepositors>
where
	AccountId: Clone + PartialEq + Eq + core::fmt::Debug,
	Balance: Clone + PartialEq + Eq + core::fmt::Debug,
	BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug,
	MaxDepositors: Get<u32>,
{
	pub payer: AccountId,
	pub payee: AccountId,
	/// Paid per block while active.
	pub rate: Balance,
	/// Everything up to this block is paid.
	pub settled_at: BlockNumber,
	pub status: StreamStatus<BlockNumber>,
	/// Where this stream waits for its next wake-up, while it is active or suspended.
	pub wake_at: Option<Slot<BlockNumber>>,
	pub depositors: BoundedVec<Deposit<AccountId, Balance>, MaxDepositors>,
	/// Everything ever deposited.
	pub deposited: Balance,
	/// Everything paid out for good (to the payee and the treasury).
	pub paid: Balance,
	/// The share of every payment withheld, held on the payee until its verdict.
	pub holdback: Permill,
	/// Taken from the escrow but withheld: held on the payee (hold reason `Holdback`) until
	/// released to it or forfeited to the payer.
	pub withheld: Balance,
	/// The parts of `withheld` scheduled for release, each from its block, in order; the rest
	/// is the current period's, not scheduled yet.
	pub tranches: BoundedVec<(BlockNumber, Balance), ConstU32<MAX_TRANCHES>>,
	/// Everything refunded to depositors.
	pub refunded: Balance,
	/// The owner's reference (a lease id), passed to the observer.
	pub reference: u64,
	/// Blocks of grace after a depletion: the chain's `GracePeriod` when the stream opened (a
	/// later change applies to later streams).
	pub grace_period: BlockNumber,
	/// The most it may ever pay out, whatever is deposited (a fixed-duration lease: its price
	/// times its duration). `None`: as long as there is escrow.
	pub cap: Option<Balance>,
}

impl<AccountId, Balance, BlockNumber, MaxDepositors>
	Stream<AccountId, Balance, BlockNumber, MaxDepositors>
where
	AccountId: Clone + PartialEq + Eq + core::fmt::Debug,
	Balance:
		Clone + PartialEq + Eq + core::fmt::Debug + frame::arithmetic::AtLeast32BitUnsigned + Copy,
	BlockNumber: Clone + PartialEq + Eq + core::fmt::Debug,
	MaxDepositors: Get<u32>,
{
	/// The escrow still held for this stream.
	pub fn held(&self) -> Balance {
		self.depositors.iter().fold(Zero::zero(), |sum: Balance, d| sum.saturating_add(d.remaining))
	}

	/// Everything charged: paid for good and withheld.
	pub fn charged(&self) -> Balance {
		self.paid.saturating_add(self.withheld)
	}

	/// What it may still pay out: the escrow held, or less where the cap is nearer.
	pub fn payable(&self) -> Balance {
		let held = self.held();
		match self.cap {
			Some(cap) => held.min(cap.saturating_sub(self.charged())),
			None => held,
		}
	}

	/// The part of `withheld` not scheduled yet.
	pub fn unmarked(&self) -> Balance {
		let marked =
			self.tranches.iter().fold(Zero::zero(), |sum: Balance, (_, a)| sum.saturating_add(*a));
		self.withheld.saturating_sub(marked)
	}
}

/// The stream type for a runtime.
pub type StreamOf<T> = Stream<
	<T as frame_system::Config>::AccountId,
	crate::BalanceOf<T>,
	frame_system::pallet_prelude::BlockNumberFor<T>,
	<T as crate::Config>::MaxDepositors,
>;
