//! The block hook: suspend streams at their depletion block and close them when grace ends, with
//! work bounded by one wake-up bucket per block.

use crate::{
	CloseReason, Config, Error, Event, Pallet, Records, StreamId, StreamOf, StreamStatus, Wakeups,
	WeightInfo,
};
use frame::{deps::frame_support::storage::with_storage_layer, prelude::*};
use stint_traits::{buckets, StreamObserver};

impl<T: Config> Pallet<T> {
	/// Looks at every stream whose wake-up falls in `now`.
	pub(crate) fn wake_up(now: BlockNumberFor<T>) -> Weight {
		let due = Wakeups::<T>::take(now);
		let count = due.len() as u32;
		for id in due {
			// Each stream on its own: one that cannot be processed does not stop the others.
			let result = with_storage_layer(|| Self::wake_stream(id, now));
			if let Err(error) = result {
				frame::log::error!(target: "runtime::streams", "stream {id} at {now:?}: {error:?}");
				Self::requeue(id, now);
			}
		}
		T::WeightInfo::on_initialize(count)
			.saturating_add(T::Observer::notification_weight().saturating_mul(count.into()))
	}

	/// Puts a stream whose wake-up failed back in a later bucket, so it is not forgotten.
	fn requeue(id: StreamId, now: BlockNumberFor<T>) {
		let requeued = with_storage_layer(|| -> DispatchResult {
			let Some(mut stream) = Records::<T>::get(id) else { return Ok(()) };
			if stream.status == StreamStatus::Closed {
				return Ok(());
			}
			stream.wake_at = None;
			Self::schedule(id, &mut stream, now.saturating_add(One::one()))?;
			Records::<T>::insert(id, stream);
			Ok(())
		});
		if requeued.is_err() {
			frame::log::error!(target: "runtime::streams", "stream {id}: no bucket to requeue in");
		}
	}

	fn wake_stream(id: StreamId, now: BlockNumberFor<T>) -> DispatchResult {
		let Some(mut stream) = Records::<T>::get(id) else { return Ok(()) };
		if stream.wake_at != Some(now) {
			// Rescheduled or closed since it was put in this bucket.
			return Ok(());
		}
		stream.wake_at = None;
		match stream.status {
			StreamStatus::Active { depletes_at } if depletes_at <= now => {
				Self::settle_stream(id, &mut stream)?;
				let grace_ends = now.saturating_add(stream.grace_period);
				stream.status = StreamStatus::Suspended { grace_ends };
				stream.settled_at = now;
				Self::schedule(id, &mut stream, grace_ends)?;
				Records::<T>::insert(id, &stream);
				Self::deposit_event(Event::Suspended { stream: id, grace_ends });
				T::Observer::on_suspended(stream.reference, id);
			}
			StreamStatus::Active { depletes_at } => {
				Self::schedule(id, &mut stream, depletes_at)?;
				Records::<T>::insert(id, &stream);
			}
			StreamStatus::Suspended { grace_ends } if grace_ends <= now => {
				Records::<T>::insert(id, &stream);
				Self::close_stream(id, CloseReason::Depleted)?;
				T::Observer::on_closed(stream.reference, id, CloseReason::Depleted);
			}
			StreamStatus::Suspended { grace_ends } => {
				Self::schedule(id, &mut stream, grace_ends)?;
				Records::<T>::insert(id, &stream);
			}
			StreamStatus::Pending | StreamStatus::Closed => Records::<T>::insert(id, &stream),
		}
		Ok(())
	}

	/// Puts `id` in the first bucket from `at` (and after the current block) that has room.
	pub(crate) fn schedule(
		id: StreamId,
		stream: &mut StreamOf<T>,
		at: BlockNumberFor<T>,
	) -> DispatchResult {
		let earliest = frame_system::Pallet::<T>::block_number().saturating_add(One::one());
		let block = buckets::schedule::<Wakeups<T>, _, _, _>(id, at, earliest)
			.ok_or(Error::<T>::WakeupQueueFull)?;
		stream.wake_at = Some(block);
		Ok(())
	}

	/// Removes `id` from the bucket it waits in.
	pub(crate) fn unschedule(id: StreamId, stream: &mut StreamOf<T>) {
		if let Some(block) = stream.wake_at.take() {
			buckets::unschedule::<Wakeups<T>, _, _, _>(&id, block);
		}
	}

	/// Moves `id` to the bucket of `at`.
	pub(crate) fn reschedule(
		id: StreamId,
		stream: &mut StreamOf<T>,
		at: BlockNumberFor<T>,
	) -> DispatchResult {
		Self::unschedule(id, stream);
		Self::schedule(id, stream, at)
	}
}
