//! What each call does, and the settlement, top-up and close every path shares.

use crate::{
	asset, BalanceOf, CloseReason, Config, Deposit, Error, Event, Pallet, Records, StreamId,
	StreamOf, StreamStatus,
};
use frame::{
	arithmetic::{helpers_128bit::multiply_by_rational_with_rounding, Rounding},
	prelude::*,
};
use stint_traits::StreamObserver;

impl<T: Config> Pallet<T> {
	/// What a call this pallet refuses is charged: its checks read the stream and the payer's
	/// balance before anything is written.
	pub(crate) fn refused(
		error: DispatchError,
	) -> frame::deps::frame_support::dispatch::DispatchErrorWithPostInfo {
		stint_traits::refusal::<Self>(error, T::DbWeight::get().reads(2))
	}

	pub(crate) fn do_settle(id: StreamId) -> Result<BalanceOf<T>, DispatchError> {
		let mut stream = Self::open_stream(id)?;
		let paid = Self::settle_stream(id, &mut stream)?;
		Records::<T>::insert(id, stream);
		Ok(paid)
	}

	/// What a call on `id` costs with the depositors the stream has now (its weight grows with
	/// them; the call was declared at `MaxDepositors`).
	pub(crate) fn charged(id: StreamId, weight: impl Fn(u32) -> Weight) -> PostDispatchInfo {
		let depositors = Records::<T>::get(id)
			.map_or(T::MaxDepositors::get(), |stream| stream.depositors.len() as u32);
		Some(weight(depositors)).into()
	}

	pub(crate) fn do_withdraw(who: &T::AccountId, id: StreamId) -> DispatchResult {
		let stream = Self::open_stream(id)?;
		ensure!(&stream.payee == who, Error::<T>::NotPayee);
		Self::do_settle(id).map(|_| ())
	}

	/// Returns whether the top-up resumed a suspended stream (and told its observer).
	pub(crate) fn do_top_up(
		who: &T::AccountId,
		id: StreamId,
		amount: BalanceOf<T>,
	) -> Result<bool, DispatchError> {
		let mut stream = Self::open_stream(id)?;
		ensure!(!amount.is_zero(), Error::<T>::ZeroAmount);
		Self::settle_stream(id, &mut stream)?;
		// A capped stream (a fixed-duration lease) already holds all it can ever pay: more would
		// only sit there, and must never make it pay more than agreed.
		if let Some(cap) = stream.cap {
			ensure!(stream.held() < cap.saturating_sub(stream.charged()), Error::<T>::FullyFunded);
		}
		asset::hold::<T>(who, amount)?;
		match stream.depositors.iter_mut().find(|d| &d.who == who) {
			Some(deposit) => {
				deposit.deposited.saturating_accrue(amount);
				deposit.remaining.saturating_accrue(amount);
			}
			None => stream
				.depositors
				.try_push(Deposit { who: who.clone(), deposited: amount, remaining: amount })
				.map_err(|_| Error::<T>::TooManyDepositors)?,
		}
		stream.deposited.saturating_accrue(amount);

		let now = frame_system::Pallet::<T>::block_number();
		let resumed = matches!(stream.status, StreamStatus::Suspended { .. });
		if resumed {
			// Resuming pays for at least a grace period: else a payer could keep the payee's
			// resources waiting, unpaid, with one unit per grace period.
			let blocks: u128 = stream.grace_period.saturated_into();
			let mut least = stream.rate.saturating_mul(blocks.saturated_into());
			if let Some(cap) = stream.cap {
				least = least.min(cap.saturating_sub(stream.charged()));
			}
			ensure!(stream.payable() >= least, Error::<T>::TopUpTooSmall);
		}
		// A pending stream only grows: it starts charging when its owner starts it.
		let depletes_at = Self::depletion_block(&stream, now);
		if stream.status != StreamStatus::Pending {
			stream.settled_at = now;
			stream.status = StreamStatus::Active { depletes_at };
			Self::reschedule(id, &mut stream, depletes_at);
		}
		Records::<T>::insert(id, &stream);

		Self::deposit_event(Event::ToppedUp {
			stream: id,
			depositor: who.clone(),
			amount,
			depletes_at,
		});
		if resumed {
			Self::deposit_event(Event::Resumed { stream: id, depletes_at });
			T::Observer::on_resumed(stream.reference, id);
		}
		Ok(resumed)
	}

	/// A stream that is not closed.
	pub(crate) fn open_stream(id: StreamId) -> Result<StreamOf<T>, DispatchError> {
		let stream = Records::<T>::get(id).ok_or(Error::<T>::UnknownStream)?;
		ensure!(stream.status != StreamStatus::Closed, Error::<T>::StreamClosed);
		Ok(stream)
	}

	/// What `stream` owes its payee at `now`: `min(held, rate × (now − settled_at))` while active.
	pub(crate) fn owed_at(stream: &StreamOf<T>, now: BlockNumberFor<T>) -> BalanceOf<T> {
		if !matches!(stream.status, StreamStatus::Active { .. }) {
			return Zero::zero();
		}
		let elapsed: u128 = now.saturating_sub(stream.settled_at).saturated_into();
		let elapsed: BalanceOf<T> = elapsed.saturated_into();
		stream.rate.saturating_mul(elapsed).min(stream.payable())
	}

	/// The block the escrow of `stream` runs out at, counting from `from`.
	pub(crate) fn depletion_block(
		stream: &StreamOf<T>,
		from: BlockNumberFor<T>,
	) -> BlockNumberFor<T> {
		let held = stream.payable();
		let rate = stream.rate.max(One::one());
		let blocks = held / rate + if (held % rate).is_zero() { Zero::zero() } else { One::one() };
		let blocks: u128 = blocks.saturated_into();
		from.saturating_add(blocks.saturated_into())
	}

	/// Pays what is owed now, drawing on every depositor in proportion to what it has left.
	/// Does not store `stream`.
	pub(crate) fn settle_stream(
		id: StreamId,
		stream: &mut StreamOf<T>,
	) -> Result<BalanceOf<T>, DispatchError> {
		let now = frame_system::Pallet::<T>::block_number();
		let owed = Self::owed_at(stream, now);
		if matches!(stream.status, StreamStatus::Active { .. }) {
			stream.settled_at = now;
		}
		if owed.is_zero() {
			return Ok(Zero::zero());
		}

		let held = stream.held();
		let mut shares: alloc::vec::Vec<BalanceOf<T>> = stream
			.depositors
			.iter()
			.map(|d| Self::pro_rata(owed, d.remaining, held).min(d.remaining))
			.collect();
		// Rounding left some of `owed` undrawn: take it from whoever still has funds, in order.
		let mut dust =
			owed.saturating_sub(shares.iter().fold(Zero::zero(), |s: BalanceOf<T>, x| s + *x));
		for (share, deposit) in shares.iter_mut().zip(stream.depositors.iter()) {
			let room = deposit.remaining.saturating_sub(*share);
			let take = room.min(dust);
			share.saturating_accrue(take);
			dust.saturating_reduce(take);
		}

		let (mut to_payee, mut burnt) = (BalanceOf::<T>::zero(), BalanceOf::<T>::zero());
		let mut withheld = BalanceOf::<T>::zero();
		for (share, deposit) in shares.into_iter().zip(stream.depositors.iter_mut()) {
			// The holdback waits on the payee for its verdict; the protocol's take on it is
			// burnt when it is released.
			let held_back = stream.holdback.mul_floor(share);
			asset::withhold::<T>(&deposit.who, &stream.payee, held_back)?;
			let now_paid = share - held_back;
			let take = T::TakeRate::get().mul_floor(now_paid);
			asset::burn::<T>(&deposit.who, take)?;
			asset::pay::<T>(&deposit.who, &stream.payee, now_paid - take)?;
			deposit.remaining.saturating_reduce(share);
			to_payee.saturating_accrue(now_paid - take);
			burnt.saturating_accrue(take);
			withheld.saturating_accrue(held_back);
		}
		stream.paid.saturating_accrue(to_payee.saturating_add(burnt));
		stream.withheld.saturating_accrue(withheld);
		Self::deposit_event(Event::Settled {
			stream: id,
			to_payee,
			burnt,
			withheld,
			held: stream.held(),
		});
		Ok(owed)
	}

	/// Releases the withheld amounts scheduled for `due_by` or earlier (`None`: everything
	/// withheld) to the payee, but for the protocol's take, burnt. Does not store `stream`.
	pub(crate) fn release_withheld(
		id: StreamId,
		stream: &mut StreamOf<T>,
		due_by: Option<BlockNumberFor<T>>,
	) -> Result<BalanceOf<T>, DispatchError> {
		let amount = match due_by {
			None => {
				stream.tranches.clear();
				stream.withheld
			}
			Some(by) => {
				let due = stream.tranches.iter().take_while(|(at, _)| *at <= by).count();
				let amount = stream
					.tranches
					.iter()
					.take(due)
					.fold(BalanceOf::<T>::zero(), |sum, (_, a)| sum.saturating_add(*a));
				stream.tranches = BoundedVec::truncate_from(stream.tranches[due..].to_vec());
				amount
			}
		};
		if amount.is_zero() {
			return Ok(amount);
		}
		let burnt = T::TakeRate::get().mul_floor(amount);
		asset::release_holdback::<T>(&stream.payee, amount, burnt)?;
		stream.withheld.saturating_reduce(amount);
		stream.paid.saturating_accrue(amount);
		Self::deposit_event(Event::Released {
			stream: id,
			to_payee: amount - burnt,
			burnt,
			withheld: stream.withheld,
		});
		Ok(amount)
	}

	/// Returns everything withheld to the payer. Does not store `stream`.
	pub(crate) fn forfeit_withheld(
		id: StreamId,
		stream: &mut StreamOf<T>,
	) -> Result<BalanceOf<T>, DispatchError> {
		let amount = stream.withheld;
		stream.tranches.clear();
		if amount.is_zero() {
			return Ok(amount);
		}
		asset::forfeit_holdback::<T>(&stream.payee, &stream.payer, amount)?;
		stream.withheld = Zero::zero();
		stream.refunded.saturating_accrue(amount);
		Self::deposit_event(Event::Forfeited { stream: id, amount });
		Ok(amount)
	}

	/// Schedules what `stream` withheld since its last mark for release from `release_at`.
	/// Does not store `stream`.
	pub(crate) fn mark_withheld(
		stream: &mut StreamOf<T>,
		release_at: BlockNumberFor<T>,
	) -> BalanceOf<T> {
		let amount = stream.unmarked();
		if amount.is_zero() {
			return amount;
		}
		// Kept in order of release: a mark earlier than the latest (a shorter window asked
		// later) waits with it; beyond the bound, it joins the latest.
		let full = stream.tranches.len() as u32 >= crate::MAX_TRANCHES;
		match stream.tranches.last_mut() {
			Some((at, sum)) if *at >= release_at || full => {
				*at = (*at).max(release_at);
				sum.saturating_accrue(amount);
			}
			// Room is checked above: this cannot fail.
			_ => drop(stream.tranches.try_push((release_at, amount))),
		}
		amount
	}

	/// `amount × part / whole`, rounded down, without overflow.
	fn pro_rata(amount: BalanceOf<T>, part: BalanceOf<T>, whole: BalanceOf<T>) -> BalanceOf<T> {
		multiply_by_rational_with_rounding(
			amount.saturated_into(),
			part.saturated_into(),
			whole.saturated_into(),
			Rounding::Down,
		)
		.map(|v| v.saturated_into())
		.unwrap_or_default()
	}

	/// Settles, refunds every depositor what it has left (or, with `to`, pays it to `to`), and
	/// closes. Stores the stream. Returns (paid now, refunded or paid to `to`).
	pub(crate) fn close_stream(
		id: StreamId,
		reason: CloseReason,
		to: Option<&T::AccountId>,
	) -> Result<(BalanceOf<T>, BalanceOf<T>), DispatchError> {
		let mut stream = Self::open_stream(id)?;
		let paid = Self::settle_stream(id, &mut stream)?;
		let mut refunded = BalanceOf::<T>::zero();
		for deposit in stream.depositors.iter_mut() {
			match to {
				Some(to) => asset::pay::<T>(&deposit.who, to, deposit.remaining)?,
				None => asset::release::<T>(&deposit.who, deposit.remaining)?,
			}
			refunded.saturating_accrue(deposit.remaining);
			deposit.remaining = Zero::zero();
		}
		stream.refunded.saturating_accrue(refunded);
		Self::unschedule(id, &mut stream);
		stream.status = StreamStatus::Closed;
		Records::<T>::insert(id, &stream);
		Self::deposit_event(Event::Closed {
			stream: id,
			reason,
			paid: stream.paid,
			refunded: stream.refunded,
		});
		Ok((paid, refunded))
	}
}
