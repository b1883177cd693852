//! Streams as the leases and the market see them ([`PaymentStreams`]), and the invariants.

use crate::{
	asset, BalanceOf, CloseReason, Config, Deposit, Error, Event, NextStreamId, Pallet, Records,
	StreamId, StreamOf, StreamStatus, WakeupQueue,
};
use alloc::collections::BTreeMap;
use frame::{deps::sp_runtime::TryRuntimeError, prelude::*};
use stint_traits::{buckets, PaymentStreams};

impl<T: Config> PaymentStreams<T::AccountId, BalanceOf<T>, BlockNumberFor<T>> for Pallet<T> {
	fn open(
		payer: &T::AccountId,
		payee: &T::AccountId,
		rate: BalanceOf<T>,
		deposit: BalanceOf<T>,
		reference: u64,
		cap: Option<BalanceOf<T>>,
		holdback: Permill,
	) -> Result<StreamId, DispatchError> {
		ensure!(!rate.is_zero(), Error::<T>::ZeroRate);
		ensure!(!deposit.is_zero(), Error::<T>::ZeroAmount);
		asset::hold::<T>(payer, deposit)?;
		let id = NextStreamId::<T>::get();
		let now = frame_system::Pallet::<T>::block_number();
		let stream = StreamOf::<T> {
			payer: payer.clone(),
			payee: payee.clone(),
			rate,
			settled_at: now,
			status: StreamStatus::Pending,
			wake_at: None,
			depositors: BoundedVec::truncate_from(alloc::vec![Deposit {
				who: payer.clone(),
				deposited: deposit,
				remaining: deposit,
			}]),
			deposited: deposit,
			paid: Zero::zero(),
			holdback,
			withheld: Zero::zero(),
			tranches: Default::default(),
			refunded: Zero::zero(),
			reference,
			grace_period: T::GracePeriod::get(),
			cap,
		};
		Records::<T>::insert(id, stream);
		NextStreamId::<T>::put(id.saturating_add(1));
		Self::deposit_event(Event::Opened {
			stream: id,
			payer: payer.clone(),
			payee: payee.clone(),
			rate,
			deposit,
		});
		Ok(id)
	}

	fn start(id: StreamId) -> Result<BlockNumberFor<T>, DispatchError> {
		let mut stream = Self::open_stream(id)?;
		ensure!(stream.status == StreamStatus::Pending, Error::<T>::AlreadyStarted);
		let now = frame_system::Pallet::<T>::block_number();
		stream.settled_at = now;
		let depletes_at = Self::depletion_block(&stream, now);
		stream.status = StreamStatus::Active { depletes_at };
		Self::schedule(id, &mut stream, depletes_at);
		Records::<T>::insert(id, stream);
		Self::deposit_event(Event::Started { stream: id, depletes_at });
		Ok(depletes_at)
	}

	fn settle(id: StreamId) -> Result<BalanceOf<T>, DispatchError> {
		Self::do_settle(id)
	}

	fn close(id: StreamId) -> Result<(BalanceOf<T>, BalanceOf<T>), DispatchError> {
		Self::close_stream(id, CloseReason::Owner, None)
	}

	fn close_to(
		id: StreamId,
		to: &T::AccountId,
	) -> Result<(BalanceOf<T>, BalanceOf<T>), DispatchError> {
		Self::close_stream(id, CloseReason::Owner, Some(to))
	}

	fn redirect(id: StreamId, payee: &T::AccountId, reference: u64) -> DispatchResult {
		let mut stream = Self::open_stream(id)?;
		ensure!(stream.status == StreamStatus::Pending, Error::<T>::AlreadyStarted);
		stream.payee = payee.clone();
		stream.reference = reference;
		Records::<T>::insert(id, stream);
		Self::deposit_event(Event::Redirected { stream: id, payee: payee.clone() });
		Ok(())
	}

	fn owed(id: StreamId) -> Option<BalanceOf<T>> {
		Records::<T>::get(id)
			.map(|stream| Self::owed_at(&stream, frame_system::Pallet::<T>::block_number()))
	}

	fn depletes_at(id: StreamId) -> Option<BlockNumberFor<T>> {
		match Records::<T>::get(id)?.status {
			StreamStatus::Active { depletes_at } => Some(depletes_at),
			_ => None,
		}
	}

	fn remaining(id: StreamId) -> Option<BalanceOf<T>> {
		Records::<T>::get(id).filter(|s| s.status != StreamStatus::Closed).map(|s| s.held())
	}

	fn paid(id: StreamId) -> Option<BalanceOf<T>> {
		Records::<T>::get(id).map(|s| s.charged())
	}

	fn mark(id: StreamId, release_at: BlockNumberFor<T>) -> Result<BalanceOf<T>, DispatchError> {
		let mut stream = Records::<T>::get(id).ok_or(Error::<T>::UnknownStream)?;
		if stream.status != StreamStatus::Closed {
			Self::settle_stream(id, &mut stream)?;
		}
		let marked = Self::mark_withheld(&mut stream, release_at);
		Records::<T>::insert(id, stream);
		Ok(marked)
	}

	fn release(
		id: StreamId,
		due_by: Option<BlockNumberFor<T>>,
	) -> Result<BalanceOf<T>, DispatchError> {
		let mut stream = Records::<T>::get(id).ok_or(Error::<T>::UnknownStream)?;
		let released = Self::release_withheld(id, &mut stream, due_by)?;
		Records::<T>::insert(id, stream);
		Ok(released)
	}

	fn forfeit(id: StreamId) -> Result<BalanceOf<T>, DispatchError> {
		let mut stream = Records::<T>::get(id).ok_or(Error::<T>::UnknownStream)?;
		let forfeited = Self::forfeit_withheld(id, &mut stream)?;
		Records::<T>::insert(id, stream);
		Ok(forfeited)
	}

	fn withheld(id: StreamId) -> Option<BalanceOf<T>> {
		Records::<T>::get(id).map(|s| s.withheld)
	}

	fn depositors(id: StreamId) -> Option<u32> {
		Records::<T>::get(id).map(|s| s.depositors.len() as u32)
	}

	fn max_depositors() -> u32 {
		T::MaxDepositors::get()
	}

	fn record_bytes() -> u32 {
		// The key: a 16-byte hash and the id.
		(16 + StreamId::max_encoded_len() + crate::StreamOf::<T>::max_encoded_len()) as u32
	}

	fn reap(id: StreamId) -> DispatchResult {
		let stream = Records::<T>::get(id).ok_or(Error::<T>::UnknownStream)?;
		ensure!(stream.status == StreamStatus::Closed, Error::<T>::StreamOpen);
		ensure!(stream.withheld.is_zero(), Error::<T>::HoldbackPending);
		Records::<T>::remove(id);
		Self::deposit_event(Event::Reaped { stream: id });
		Ok(())
	}
}

impl<T: Config> Pallet<T> {
	/// The streams' invariants: money is conserved in every stream, the escrow held on each
	/// depositor equals its amounts in all streams, and every open stream waits in its bucket.
	pub fn do_try_state() -> Result<(), TryRuntimeError> {
		let mut held_by: BTreeMap<T::AccountId, BalanceOf<T>> = BTreeMap::new();
		let mut withheld_on: BTreeMap<T::AccountId, BalanceOf<T>> = BTreeMap::new();
		for (id, stream) in Records::<T>::iter() {
			ensure!(id < NextStreamId::<T>::get(), "a stream id is not below NextStreamId");
			let held = stream.held();
			ensure!(
				stream.charged().saturating_add(stream.refunded).saturating_add(held)
					== stream.deposited,
				"a stream does not conserve money: paid + withheld + refunded + held != deposited"
			);
			if let Some(cap) = stream.cap {
				ensure!(stream.charged() <= cap, "a stream charged more than its cap");
			}
			let marked = stream
				.tranches
				.iter()
				.fold(BalanceOf::<T>::zero(), |sum, (_, a)| sum.saturating_add(*a));
			ensure!(marked <= stream.withheld, "a stream scheduled more than it withholds");
			ensure!(
				stream.tranches.windows(2).all(|pair| pair[0].0 < pair[1].0),
				"a stream's scheduled releases are out of order"
			);
			let entry = withheld_on.entry(stream.payee.clone()).or_default();
			*entry = entry.saturating_add(stream.withheld);
			ensure!(
				stream.depositors.iter().fold(BalanceOf::<T>::zero(), |s, d| s + d.deposited)
					== stream.deposited,
				"a stream's depositors do not add up to what it was deposited"
			);
			for deposit in &stream.depositors {
				ensure!(
					deposit.remaining <= deposit.deposited,
					"a depositor has more left than it put in"
				);
				let entry = held_by.entry(deposit.who.clone()).or_default();
				*entry = entry.saturating_add(deposit.remaining);
			}
			match stream.status {
				StreamStatus::Closed => {
					ensure!(held.is_zero(), "a closed stream still holds escrow");
					ensure!(stream.wake_at.is_none(), "a closed stream is scheduled");
				}
				StreamStatus::Pending => {
					ensure!(stream.wake_at.is_none(), "a pending stream is scheduled");
					ensure!(stream.paid.is_zero(), "a pending stream has paid");
				}
				_ => {
					let slot = stream.wake_at.ok_or("an open stream is not scheduled")?;
					ensure!(
						buckets::holds::<WakeupQueue<T>>(&id, slot),
						"a stream is not where its wake-up says"
					);
				}
			}
		}
		for (who, amount) in held_by {
			ensure!(
				asset::held::<T>(&who) == amount,
				"a depositor's escrow hold differs from its streams"
			);
		}
		for (who, amount) in withheld_on {
			ensure!(
				asset::withheld::<T>(&who) == amount,
				"a payee's holdback differs from what its streams withhold"
			);
		}
		for (id, slot) in buckets::all::<WakeupQueue<T>>()? {
			let stream =
				Records::<T>::get(id).ok_or("the wake-up queue names an unknown stream")?;
			ensure!(
				stream.wake_at == Some(slot),
				"the wake-up queue names a stream scheduled elsewhere"
			);
		}
		Ok(())
	}
}
