//! The block hook: suspend streams at their depletion block and close them when grace ends, with
//! work bounded by `MaxWakeupsPerBlock` streams per block.

use crate::{
	CloseReason, Config, Event, Pallet, Records, StreamId, StreamOf, StreamStatus, WakeupCursor,
	WakeupPages, Wakeups, WeightInfo,
};
use frame::{deps::frame_support::storage::with_storage_layer, prelude::*};
use stint_traits::{
	buckets::{self, Slot},
	StreamObserver,
};

/// The streams' wake-up queue: [`Wakeups`], its page counts and its cursor.
pub struct WakeupQueue<T>(core::marker::PhantomData<T>);

impl<T: Config> buckets::Queue for WakeupQueue<T> {
	type Block = BlockNumberFor<T>;
	type Id = StreamId;
	type PerBlock = T::MaxWakeupsPerBlock;
	type Pages = Wakeups<T>;
	type PageCounts = WakeupPages<T>;
	type Cursor = WakeupCursor<T>;
}

impl<T: Config> Pallet<T> {
	/// Looks at the streams whose wake-up has come, in the order they fell due, as many as a
	/// block's hook may.
	pub(crate) fn wake_up(now: BlockNumberFor<T>) -> Weight {
		let (due, read) = buckets::take_due::<WakeupQueue<T>>(now);
		let taken = due.len() as u32;
		for (id, slot) in due {
			// Each stream on its own: one that cannot be processed does not stop the others.
			let result = with_storage_layer(|| Self::wake_stream(id, slot, now));
			if let Err(error) = result {
				frame::log::error!(target: "runtime::streams", "stream {id} at {now:?}: {error:?}");
				Self::requeue(id, slot);
			}
		}
		T::WeightInfo::on_initialize(taken)
			.saturating_add(T::DbWeight::get().reads_writes(read.into(), read.into()))
			.saturating_add(T::Observer::notification_weight().saturating_mul(taken.into()))
	}

	/// Puts a stream whose wake-up failed back in the queue, where the hook goes on from, so it
	/// is not forgotten.
	fn requeue(id: StreamId, slot: Slot<BlockNumberFor<T>>) {
		let Some(mut stream) = Records::<T>::get(id) else { return };
		if stream.status == StreamStatus::Closed || stream.wake_at != Some(slot) {
			return;
		}
		let now = frame_system::Pallet::<T>::block_number();
		stream.wake_at = Some(buckets::requeue::<WakeupQueue<T>>(id, now));
		Records::<T>::insert(id, stream);
	}

	fn wake_stream(
		id: StreamId,
		slot: Slot<BlockNumberFor<T>>,
		now: BlockNumberFor<T>,
	) -> DispatchResult {
		let Some(mut stream) = Records::<T>::get(id) else { return Ok(()) };
		if stream.wake_at != Some(slot) {
			// Rescheduled or closed since it was queued here.
			return Ok(());
		}
		stream.wake_at = None;
		match stream.status {
			StreamStatus::Active { depletes_at } if depletes_at <= now => {
				Self::settle_stream(id, &mut stream)?;
				let grace_ends = now.saturating_add(stream.grace_period);
				stream.status = StreamStatus::Suspended { grace_ends };
				stream.settled_at = now;
				Self::schedule(id, &mut stream, grace_ends);
				Records::<T>::insert(id, &stream);
				Self::deposit_event(Event::Suspended { stream: id, grace_ends });
				T::Observer::on_suspended(stream.reference, id);
			}
			StreamStatus::Active { depletes_at } => {
				Self::schedule(id, &mut stream, depletes_at);
				Records::<T>::insert(id, &stream);
			}
			StreamStatus::Suspended { grace_ends } if grace_ends <= now => {
				Records::<T>::insert(id, &stream);
				Self::close_stream(id, CloseReason::Depleted, None)?;
				T::Observer::on_closed(stream.reference, id, CloseReason::Depleted);
			}
			StreamStatus::Suspended { grace_ends } => {
				Self::schedule(id, &mut stream, grace_ends);
				Records::<T>::insert(id, &stream);
			}
			StreamStatus::Pending | StreamStatus::Closed => Records::<T>::insert(id, &stream),
		}
		Ok(())
	}

	/// Queues `id` for a wake-up at `at` (never before the next block). Never fails: a busy
	/// queue must not refuse a user's call.
	pub(crate) fn schedule(id: StreamId, stream: &mut StreamOf<T>, at: BlockNumberFor<T>) {
		let earliest = frame_system::Pallet::<T>::block_number().saturating_add(One::one());
		stream.wake_at = Some(buckets::schedule::<WakeupQueue<T>>(id, at, earliest));
	}

	/// Takes `id` out of the wake-up queue.
	pub(crate) fn unschedule(id: StreamId, stream: &mut StreamOf<T>) {
		if let Some(slot) = stream.wake_at.take() {
			buckets::unschedule::<WakeupQueue<T>>(&id, slot);
		}
	}

	/// Moves `id` to the wake-up `at`.
	pub(crate) fn reschedule(id: StreamId, stream: &mut StreamOf<T>, at: BlockNumberFor<T>) {
		Self::unschedule(id, stream);
		Self::schedule(id, stream, at)
	}
}
