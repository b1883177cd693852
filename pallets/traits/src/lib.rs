//! How Stint's pallets talk to each other: through these traits, never through each other's
//! storage. The registry (providers), the bonds, the market, the leases and the streams each
//! implement or consume them, and tests replace any one with a simple stand-in.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

use alloc::vec::Vec;
use frame::prelude::*;
use stint_primitives::{
	DeviceId, GpuDevice, GpuRequirements, LeaseId, Outcome, SlashReason, WorkerKey,
};

/// What a call refused by its own pallet is charged. A Stint pallet checks a call (reads, and
/// `ensure!`s that name its own errors) before it writes anything, so an error of pallet `P`'s
/// own is a refusal that cost about `checks` (the reads of its checks), not the call's declared
/// worst case: a typo sent from polkadot.js costs about a transfer, not sixteen. An error from
/// another pallet (a hold, a transfer, a slash) can come after work was done: it keeps the
/// declared weight.
pub fn refusal<P: frame::traits::PalletInfoAccess>(
	error: DispatchError,
	checks: Weight,
) -> frame::deps::frame_support::dispatch::DispatchErrorWithPostInfo {
	use frame::deps::frame_support::dispatch::WithPostDispatchInfo;
	match error {
		DispatchError::Module(frame::deps::sp_runtime::ModuleError { index, .. })
			if usize::from(index) == P::index() =>
		{
			error.with_weight(checks)
		}
		_ => error.into(),
	}
}

/// A call's result without what it was charged: what tests compare with a named error, whether
/// the call returns `DispatchResult` or `DispatchResultWithPostInfo` (a refusal carries the
/// weight it was charged, see [`refusal`]).
pub trait WithoutPostInfo {
	/// The result, its post-dispatch information dropped.
	fn without_post_info(self) -> DispatchResult;
}

impl<T> WithoutPostInfo for Result<T, DispatchError> {
	fn without_post_info(self) -> DispatchResult {
		self.map(|_| ())
	}
}

impl<T> WithoutPostInfo
	for Result<T, frame::deps::frame_support::dispatch::DispatchErrorWithPostInfo>
{
	fn without_post_info(self) -> DispatchResult {
		self.map(|_| ()).map_err(|refused| refused.error)
	}
}

/// [`WithoutPostInfo::without_post_info`] of `result`: `assert_noop!(refused(call), error)`.
pub fn refused(result: impl WithoutPostInfo) -> DispatchResult {
	result.without_post_info()
}

/// The provider registry, as the market and the leases see it.
pub trait ProviderRegistry<AccountId> {
	/// Registered, not paused and not leaving: may take new leases.
	fn is_active(who: &AccountId) -> bool;
	/// Who `signer` acts for: itself if it is a registered provider, or the provider that bound
	/// it as a worker key, with that key. Refused (by name) for anyone else, including keys that
	/// were rotated out or unbound.
	fn acting_for(signer: &AccountId) -> Result<(AccountId, Option<WorkerKey>), DispatchError>;
	/// The worker key of `who` bound to every one of `devices` (one machine), if there is one: it
	/// signs the results of a lease on them.
	fn worker_for(who: &AccountId, devices: &[DeviceId]) -> Option<WorkerKey>;
	/// The devices `who`'s worker `key` acts for.
	fn worker_devices(who: &AccountId, key: &WorkerKey) -> Vec<DeviceId>;
	/// The provider's registered GPUs.
	fn devices(who: &AccountId) -> Vec<GpuDevice>;
	/// The provider's reputation score, if registered.
	fn reputation(who: &AccountId) -> Option<Permill>;
	/// Whether `who` may offer exactly `devices` for an order that needs `requirements`: it is
	/// active, in the required region, reputable enough, owns every device (each named once),
	/// none of them is committed, they are all bound to one worker key, and together they meet
	/// the requirements. The error names what is wrong.
	fn check_offer(
		who: &AccountId,
		devices: &[DeviceId],
		requirements: &GpuRequirements,
	) -> DispatchResult;
	/// The lease `who`'s `device` is committed to, if any. A device id names a GPU within its
	/// provider's inventory only.
	fn committed_to(who: &AccountId, device: &DeviceId) -> Option<LeaseId>;
	/// Commits `devices` of `who` to `lease`: none of them can serve another lease, and the
	/// provider cannot change its hardware or leave, until they are released.
	fn commit_devices(who: &AccountId, devices: &[DeviceId], lease: LeaseId) -> DispatchResult;
	/// Releases devices committed to `lease`.
	fn release_devices(who: &AccountId, devices: &[DeviceId], lease: LeaseId);
	/// Whether `a` and `b` are one party: the same account, or one is a worker key of the
	/// other. Replicas of an order, and a dispute's verifier and provider, must not be.
	fn tied(a: &AccountId, b: &AccountId) -> bool
	where
		AccountId: PartialEq,
	{
		a == b
	}
	/// Draws a provider to re-execute a disputed result: scanning at most `max_scan`
	/// registered providers from the point of the registry's key space that `seed` names
	/// (wrapping round), the first that `check_offer` would let offer free devices on one worker
	/// for `requirements`, that is none of `exclude`, is no worker key of one of them and has
	/// none of them as a worker key, and that `accept` takes (e.g. it has the free bond).
	/// Returns it with the devices. A registry that cannot draw returns `None`.
	fn draw(
		_requirements: &GpuRequirements,
		_seed: [u8; 32],
		_exclude: &[AccountId],
		_max_scan: u32,
		_accept: &dyn Fn(&AccountId) -> bool,
	) -> Option<(AccountId, Vec<DeviceId>)> {
		None
	}
}

/// What the leases need to know of an order once it is leased: what hardware re-runs it.
pub trait OrderRequirements {
	/// The GPUs order `order` asked for, while the order exists.
	fn requirements(order: OrderId) -> Option<GpuRequirements>;
}

/// A provider's standing bids, as the registry sees them: a provider that pauses, announces its
/// exit or changes the hardware it bid with takes them all back, so no bid can win a lease its
/// provider will not serve.
pub trait StandingBids<AccountId> {
	/// Withdraws every standing bid of `provider`, releasing their collateral and deposits.
	/// Returns how many there were.
	fn retract_all(provider: &AccountId) -> u32;
	/// Withdraws the standing bids of `provider` that name any of `devices` (their worker was
	/// unbound or changed), as [`Self::retract_all`] would. Returns how many standing bids it
	/// looked at: it costs [`Self::retract_weight`] of that.
	fn retract_on(provider: &AccountId, devices: &[DeviceId]) -> u32;
	/// What [`Self::retract_all`] costs when the provider had `bids` standing bids.
	fn retract_weight(bids: u32) -> Weight;
	/// The most [`Self::retract_all`] can cost.
	fn retract_all_weight() -> Weight;
}

impl<AccountId> StandingBids<AccountId> for () {
	fn retract_all(_: &AccountId) -> u32 {
		0
	}
	fn retract_on(_: &AccountId, _: &[DeviceId]) -> u32 {
		0
	}
	fn retract_weight(_: u32) -> Weight {
		Weight::zero()
	}
	fn retract_all_weight() -> Weight {
		Weight::zero()
	}
}

/// Where the outcome of every lease is recorded, to build the provider's reputation.
pub trait ReputationRecorder<AccountId> {
	/// Records one outcome for `who` of a lease `buyer` paid for, counting `weight` of a full
	/// one: a served lease counts by what it delivered (time run and money paid), and no more
	/// than what is left of the buyer's credit; a fault counts in full.
	fn record(who: &AccountId, buyer: &AccountId, outcome: Outcome, weight: Permill);
}

impl<AccountId> ReputationRecorder<AccountId> for () {
	fn record(_: &AccountId, _: &AccountId, _: Outcome, _: Permill) {}
}

/// A provider's bond as collateral: part of it can be locked against a lease.
pub trait ProviderCollateral<AccountId, Balance> {
	/// The bond that is neither locked nor unbonding: what can still be locked.
	fn free_bond(who: &AccountId) -> Balance;
	/// Locks `amount` of the free bond. Fails, changing nothing, if the free bond is smaller.
	fn lock_collateral(who: &AccountId, amount: Balance) -> DispatchResult;
	/// Unlocks up to `amount` (less if a slash already reduced the bond).
	fn unlock_collateral(who: &AccountId, amount: Balance);
	/// Takes up to `amount` of what is locked out of the bond (a forfeited bid deposit, which
	/// was locked with its bid): paid to `to`, or burnt if `None`. Not a slash: the provider
	/// walked away from a commitment, nothing more. Returns what was taken (less if a slash
	/// already reduced the bond).
	fn forfeit_locked(who: &AccountId, amount: Balance, to: Option<&AccountId>) -> Balance;
}

/// Taking a provider's bond for a fault.
pub trait Slashing<AccountId, Balance> {
	/// Slashes up to `amount` from `who`'s bond (active first, then unbonding chunks). The buyer
	/// harmed, if any, and the reporter, if any, get their configured shares; the rest goes to
	/// the chain's slash handler. Returns what was slashed (less than `amount` if the bond is
	/// smaller).
	fn slash(
		who: &AccountId,
		amount: Balance,
		buyer: Option<&AccountId>,
		reporter: Option<&AccountId>,
		reason: SlashReason,
	) -> Balance;
	/// Takes up to `amount` from `who`'s bond, as [`Self::slash`] does, and pays all of it to
	/// `to`: restitution of what a provider was paid for a false result. Returns what was
	/// taken (less than `amount` if the bond is smaller).
	fn restitute(who: &AccountId, amount: Balance, to: &AccountId, reason: SlashReason) -> Balance;
}

/// Identifies a payment stream.
pub type StreamId = u64;

/// Why a stream closed.
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
pub enum CloseReason {
	/// The pallet that opened it closed it (a lease completed or was closed).
	#[codec(index = 0)]
	Owner,
	/// It ran out of escrow and was not topped up during the grace period. (Index 1 was the
	/// payer closing it directly: retired, the payer goes through the owner.)
	#[codec(index = 2)]
	Depleted,
}

/// Escrow that pays by the block, as the leases and the market see it.
pub trait PaymentStreams<AccountId, Balance, BlockNumber> {
	/// Opens a pending stream that will pay `rate` per block from `payer` to `payee`, holding
	/// `deposit` of the payer's balance as escrow now. It charges nothing until [`Self::start`].
	/// `reference` (e.g. a lease id) comes back in every [`StreamObserver`] notification. With
	/// a `cap`, it never charges more than that in all, whatever is deposited later. The
	/// `holdback` share of every payment is withheld: held on the payee until
	/// [`Self::release`] pays it or [`Self::forfeit`] returns it to the payer.
	fn open(
		payer: &AccountId,
		payee: &AccountId,
		rate: Balance,
		deposit: Balance,
		reference: u64,
		cap: Option<Balance>,
		holdback: Permill,
	) -> Result<StreamId, DispatchError>;
	/// Starts charging a pending stream from this block. Returns the block its escrow runs out.
	fn start(id: StreamId) -> Result<BlockNumber, DispatchError>;
	/// Pays the payee what is owed up to now. Returns what was paid.
	fn settle(id: StreamId) -> Result<Balance, DispatchError>;
	/// Settles, then refunds the rest to the depositors pro rata and closes the stream. No
	/// observer is notified: the caller is the one closing. Returns (paid now, refunded).
	fn close(id: StreamId) -> Result<(Balance, Balance), DispatchError>;
	/// Closes as [`Self::close`] does, but pays what the escrow still holds to `to` instead of
	/// refunding it: a dispute bond's remainder goes to the provider whose result stood.
	/// Returns (paid now, paid to `to`).
	fn close_to(id: StreamId, to: &AccountId) -> Result<(Balance, Balance), DispatchError>;
	/// Makes `payee` the payee of a pending stream (nothing charged yet), and `reference` what
	/// its notifications name: a dispute bond is held before the provider (and the lease) that
	/// will earn it is drawn.
	fn redirect(id: StreamId, payee: &AccountId, reference: u64) -> DispatchResult;
	/// What is owed now but not yet paid.
	fn owed(id: StreamId) -> Option<Balance>;
	/// The block at which the escrow runs out at the current rate, if the stream is active.
	fn depletes_at(id: StreamId) -> Option<BlockNumber>;
	/// The escrow still held, if the stream is not closed.
	fn remaining(id: StreamId) -> Option<Balance>;
	/// Removes a closed stream's record. Refused while it is open.
	fn reap(id: StreamId) -> DispatchResult;
	/// The most bytes a stream keeps in storage until it is reaped (its key and record): what
	/// a storage deposit pays for.
	fn record_bytes() -> u32;
	/// Everything the stream charged over its life (paid to the payee and the treasury, and
	/// withheld), closed or not.
	fn paid(id: StreamId) -> Option<Balance>;
	/// Settles an open stream, then sets what it has withheld and not yet scheduled (the
	/// holdback of the period since the last mark) to be released from block `release_at`.
	/// Also works on a closed stream (its last period). Returns the amount scheduled.
	fn mark(id: StreamId, release_at: BlockNumber) -> Result<Balance, DispatchError>;
	/// Pays the payee (less the protocol's take) the withheld amounts scheduled for
	/// `due_by` or earlier; with `None`, everything withheld, scheduled or not. Returns what
	/// it released.
	fn release(id: StreamId, due_by: Option<BlockNumber>) -> Result<Balance, DispatchError>;
	/// Returns everything withheld, scheduled or not, to the payer. Returns the amount.
	fn forfeit(id: StreamId) -> Result<Balance, DispatchError>;
	/// What the stream withholds now (held on the payee), if it exists.
	fn withheld(id: StreamId) -> Option<Balance>;
	/// How many accounts paid into the stream: what settling or closing it costs grows with it.
	fn depositors(id: StreamId) -> Option<u32>;
	/// The most depositors a stream takes: what a call that settles or closes one is weighed at
	/// before it knows which.
	fn max_depositors() -> u32;
}

/// Told about what happens to a stream without its owner asking: a depletion, a top-up during
/// grace, a close at the end of grace or by the payer.
pub trait StreamObserver {
	/// The stream ran out of escrow: it charges nothing until topped up or closed.
	fn on_suspended(reference: u64, stream: StreamId);
	/// A top-up during grace resumed the stream.
	fn on_resumed(reference: u64, stream: StreamId);
	/// The stream closed for `reason`.
	fn on_closed(reference: u64, stream: StreamId, reason: CloseReason);
	/// The most any one notification costs: the block hook charges it for each stream due.
	fn notification_weight() -> Weight;
	/// What [`Self::on_resumed`] costs: a top-up that resumes a stream is charged it.
	fn resume_weight() -> Weight;
}

impl StreamObserver for () {
	fn on_suspended(_: u64, _: StreamId) {}
	fn on_resumed(_: u64, _: StreamId) {}
	fn on_closed(_: u64, _: StreamId, _: CloseReason) {}
	fn notification_weight() -> Weight {
		Weight::zero()
	}
	fn resume_weight() -> Weight {
		Weight::zero()
	}
}

/// Identifies an order.
pub type OrderId = u64;

/// What the market hands the lease pallet when a buyer (or the auto-accept) picks a bid.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct NewLease<AccountId, Balance, BlockNumber> {
	pub order: OrderId,
	pub buyer: AccountId,
	pub provider: AccountId,
	/// The exact devices the bid named.
	pub devices: Vec<DeviceId>,
	pub price_per_block: Balance,
	/// Escrow for the stream, already released from the order's hold on the buyer.
	pub escrow: Balance,
	/// `Some(blocks)` for a fixed-duration job, `None` for open-ended.
	pub duration: Option<BlockNumber>,
	/// The provider's bond already locked for this lease; the lease unlocks it when it ends.
	pub collateral: Balance,
	/// Blocks of notice the provider must give before ending the lease early.
	pub termination_notice: BlockNumber,
	/// The sha256 digest of the image the order pinned: the result must name it.
	pub image_digest: [u8; 32],
	/// The share of every payment withheld until the verdict on the period it paid for.
	pub holdback: Permill,
	/// Blocks the buyer asked to judge a result in (zero: the chain's verdict window).
	pub verdict_window: BlockNumber,
	/// The order promised the same outputs for the same inputs: its result may be disputed.
	pub deterministic: bool,
	/// How many replicas the order runs: above 1, this lease is one of that many created
	/// together for the order (in one call, one after another), and ends by a sealed result
	/// revealed once every replica committed; the replicas' majority decides.
	pub replicas: u32,
}

/// Creates leases: implemented by the lease pallet, called by the market.
pub trait LeaseFactory<AccountId, Balance, BlockNumber> {
	/// Starts a lease: opens its payment stream and commits the devices. Fails, changing
	/// nothing, if the devices cannot be committed or the escrow cannot be held.
	fn create_lease(
		lease: NewLease<AccountId, Balance, BlockNumber>,
	) -> Result<LeaseId, DispatchError>;
	/// The block `lease` ended in, if it exists and has ended (for a replica, the block its
	/// order's replicas were decided in, once every one of them ended).
	fn ended_at(lease: LeaseId) -> Option<BlockNumber>;
	/// Removes an ended lease and its payment stream from storage, recording a verdict still
	/// pending on its result. Refused while the lease is live or its verdict window is open.
	/// A replica takes the other replicas of its order with it.
	fn reap(lease: LeaseId) -> DispatchResult;
	/// The most bytes the leases of an order of `replicas` keep in storage until they are
	/// reaped (each lease, its dispute and its stream; a replicated order's group): what the
	/// order's storage deposit pays for.
	fn record_bytes(replicas: u32) -> u32;
}

/// What a provider still answers for after its leases ended: the registry asks before it lets
/// the provider leave, so no verdict, slash or dispute can be dodged by deregistering.
pub trait Obligations<AccountId> {
	/// How many results of `who` still wait for a verdict (their collateral locked).
	fn pending(who: &AccountId) -> u32;
}

impl<AccountId> Obligations<AccountId> for () {
	fn pending(_: &AccountId) -> u32 {
		0
	}
}

/// This chain's genesis hash, as 32 bytes: what a worker's signed report and a worker key's
/// consent name, so that neither can be replayed on another chain.
pub fn genesis_hash<T: frame_system::Config>() -> [u8; 32] {
	let hash = frame_system::Pallet::<T>::block_hash(BlockNumberFor::<T>::zero());
	let mut bytes = [0u8; 32];
	let source = hash.as_ref();
	let len = source.len().min(32);
	bytes[..len].copy_from_slice(&source[..len]);
	bytes
}

/// The timeline a block hook works through: for each block, the ids due in it, in pages of
/// [`buckets::PAGE_SIZE`]; and a cursor, the first block and page the hook has not handled yet.
/// The hook takes at most [`buckets::Queue::PerBlock`] ids a block, strictly in the order they
/// fall due, so a flood can delay what comes after it but never starve it, and an id is never
/// handed to the hook before its block. Scheduling costs the same few reads and writes whatever
/// the queue holds, never fails and never loses an id. Market deadlines, stream wake-ups and
/// dispute draws use it.
pub mod buckets {
	use alloc::vec::Vec;
	use codec::{Decode, DecodeWithMemTracking, Encode, FullCodec, MaxEncodedLen};
	use frame::{
		deps::frame_support::storage::{IterableStorageMap, StorageMap, StorageValue},
		prelude::*,
	};
	use scale_info::TypeInfo;

	/// The most ids in one page of a block.
	pub const PAGE_SIZE: u32 = 16;

	/// A page of ids.
	pub type Page<Id> = BoundedVec<Id, ConstU32<PAGE_SIZE>>;

	/// Where a scheduled id waits: the record that owns the id keeps it, so removing it is one
	/// write, and a hook that finds an id checks that it still waits there.
	#[derive(
		Clone,
		Copy,
		PartialEq,
		Eq,
		PartialOrd,
		Ord,
		Debug,
		Encode,
		Decode,
		DecodeWithMemTracking,
		MaxEncodedLen,
		TypeInfo,
	)]
	pub struct Slot<Block> {
		/// The block it falls due in.
		pub block: Block,
		/// Its page of that block.
		pub page: u32,
	}

	impl<Block> Slot<Block> {
		/// The first page of `block`.
		pub fn first(block: Block) -> Self {
			Self { block, page: 0 }
		}
	}

	/// The storage of one queue. A pallet declares the three items and names them here.
	pub trait Queue {
		/// The block number.
		type Block: FullCodec + Copy + Ord + Saturating + One;
		/// What is scheduled.
		type Id: FullCodec + Clone + PartialEq;
		/// The most ids the hook takes in one block: what its weight is bounded by.
		type PerBlock: Get<u32>;
		/// The pages, by block and page number.
		type Pages: StorageMap<(Self::Block, u32), Page<Self::Id>, Query = Page<Self::Id>>
			+ IterableStorageMap<(Self::Block, u32), Page<Self::Id>>;
		/// How many pages each block has had (the last one is where the next id goes).
		type PageCounts: StorageMap<Self::Block, u32, Query = u32>
			+ IterableStorageMap<Self::Block, u32>;
		/// The first slot the hook has not handled; none before its first block.
		type Cursor: StorageValue<Slot<Self::Block>, Query = Option<Slot<Self::Block>>>;
	}

	/// The most ids a block's hook of `Q` is handed.
	pub fn max_due_per_block<Q: Queue>() -> u32 {
		Q::PerBlock::get().max(1)
	}

	/// The most storage reads a block's hook of `Q` makes: the cursor, and for each id (or page
	/// left empty by [`unschedule`], or block with no pages) at most two.
	pub fn max_reads_per_block<Q: Queue>() -> u32 {
		max_due_per_block::<Q>().saturating_mul(4).saturating_add(1)
	}

	/// Puts `id` on the last page of the block `at` (never before `earliest`, nor before the
	/// hook's cursor), or on a new page when that one is full. Reads and writes one page count
	/// and one page, whatever the queue holds.
	pub fn schedule<Q: Queue>(id: Q::Id, at: Q::Block, earliest: Q::Block) -> Slot<Q::Block> {
		let mut block = at.max(earliest);
		let mut first = 0;
		if let Some(cursor) = Q::Cursor::get() {
			if block <= cursor.block {
				block = cursor.block;
				first = cursor.page;
			}
		}
		let count = Q::PageCounts::get(block);
		let mut page = count.saturating_sub(1).max(first);
		if Q::Pages::try_mutate((block, page), |ids| ids.try_push(id.clone())).is_err() {
			page = page.saturating_add(1);
			Q::Pages::mutate((block, page), |ids| {
				// A new page: empty, so the push cannot fail.
				let _ = ids.try_push(id);
			});
		}
		if page >= count {
			Q::PageCounts::insert(block, page.saturating_add(1));
		}
		Slot { block, page }
	}

	/// Puts `id`, which the hook of `now` took but could not handle, back where the hook goes on
	/// from: at the end of the cursor's block (the next block when the hook is not behind),
	/// ahead of everything that falls due later.
	pub fn requeue<Q: Queue>(id: Q::Id, now: Q::Block) -> Slot<Q::Block> {
		let at = Q::Cursor::get().map_or(now.saturating_add(One::one()), |cursor| cursor.block);
		schedule::<Q>(id, at, at)
	}

	/// Takes `id` out of `slot`, and an empty page out of storage.
	pub fn unschedule<Q: Queue>(id: &Q::Id, slot: Slot<Q::Block>) {
		Q::Pages::mutate_exists((slot.block, slot.page), |page| {
			if let Some(ids) = page {
				ids.retain(|other| other != id);
				if ids.is_empty() {
					*page = None;
				}
			}
		});
	}

	/// Ids of queue `Q`, each with the slot it waits (or waited) in.
	pub type Placed<Q> = Vec<(<Q as Queue>::Id, Slot<<Q as Queue>::Block>)>;

	/// What the hook of block `now` handles: from the cursor on, in the order they fall due, the
	/// ids of every block up to `now`, at most [`max_due_per_block`] of them and
	/// [`max_reads_per_block`] reads. Each comes with the slot it was taken from, which the
	/// caller compares with the one its record names. Returns them and how many reads it made.
	pub fn take_due<Q: Queue>(now: Q::Block) -> (Placed<Q>, u32) {
		let budget = max_due_per_block::<Q>() as usize;
		let max_reads = max_reads_per_block::<Q>();
		let mut cursor = Q::Cursor::get().unwrap_or(Slot::first(now));
		let mut due: Placed<Q> = Vec::new();
		let mut read = 1u32;
		while cursor.block <= now && due.len() < budget && read < max_reads {
			let count = Q::PageCounts::get(cursor.block);
			read.saturating_inc();
			if cursor.page >= count {
				// This block is done: the next one.
				Q::PageCounts::remove(cursor.block);
				let next = cursor.block.saturating_add(One::one());
				if next == cursor.block {
					break;
				}
				cursor = Slot::first(next);
				continue;
			}
			let mut ids = Q::Pages::take((cursor.block, cursor.page)).into_inner();
			read.saturating_inc();
			let room = budget - due.len();
			let rest = if ids.len() > room { ids.split_off(room) } else { Vec::new() };
			due.extend(ids.into_iter().map(|id| (id, cursor)));
			if rest.is_empty() {
				cursor.page = cursor.page.saturating_add(1);
			} else {
				// Out of budget: the rest of this page waits for the next block.
				Q::Pages::insert((cursor.block, cursor.page), Page::<Q::Id>::truncate_from(rest));
			}
		}
		Q::Cursor::put(cursor);
		(due, read)
	}

	/// Whether `id` waits in `slot`.
	pub fn holds<Q: Queue>(id: &Q::Id, slot: Slot<Q::Block>) -> bool {
		Q::Pages::get((slot.block, slot.page)).contains(id)
	}

	/// Every id the queue holds, with its slot: for invariant checks only (it reads everything).
	/// Fails if a page lies before the cursor (it would never be handled) or beyond its block's
	/// page count (the next id would not go after it).
	pub fn all<Q: Queue>() -> Result<Placed<Q>, &'static str> {
		let cursor = Q::Cursor::get();
		let mut found = Vec::new();
		for ((block, page), ids) in Q::Pages::iter() {
			let slot = Slot { block, page };
			if cursor.is_some_and(|cursor| slot < cursor) {
				return Err("a page before the hook's cursor was not handled");
			}
			if page >= Q::PageCounts::get(block) {
				return Err("a page lies beyond its block's page count");
			}
			if ids.is_empty() {
				return Err("an empty page is stored");
			}
			found.extend(ids.into_iter().map(|id| (id, slot)));
		}
		Ok(found)
	}
}
