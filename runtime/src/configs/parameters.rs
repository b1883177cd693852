//! Settings root may change while the chain runs (the SDK's parameters pallet): the deadlines of
//! leases and streams, and the window in which a buyer may object to a result. Each lease,
//! stream and pending verdict keeps the values it was created with, so a change applies to those
//! created after it. The defaults are the values the chain launched with.
//!
//! Each is read through [`Clamped`]: a value root sets outside its bounds is taken as the
//! nearer bound, so no setting can break the market (a zero grace period reopening dust
//! top-ups, a verdict window outlasting `Retention` and blocking reaping, an acknowledgement
//! deadline no worker can meet). The bounds are beside each parameter's use in `market.rs`.

use polkadot_sdk::*;

use frame_support::{
	dynamic_params::{dynamic_pallet_params, dynamic_params},
	traits::{AsEnsureOriginWithArg, Get},
};
use frame_system::EnsureRoot;

use crate::{AccountId, Balance, BlockNumber, Runtime, RuntimeEvent, HOURS, MINUTES, STINT};

#[dynamic_params(RuntimeParameters, pallet_parameters::Parameters::<Runtime>)]
pub mod dynamic_params {
	use super::*;

	/// `pallet-leases`.
	#[dynamic_pallet_params]
	#[codec(index = 0)]
	pub mod leases {
		/// Blocks a provider has to acknowledge a new lease.
		#[codec(index = 0)]
		pub static AckDeadline: BlockNumber = 10 * MINUTES;

		/// Blocks after the end of a fixed-duration lease in which its result may still land.
		#[codec(index = 1)]
		pub static ResultGrace: BlockNumber = HOURS;

		/// The most blocks an open-ended lease may run between checkpoints.
		#[codec(index = 2)]
		pub static CheckpointInterval: BlockNumber = HOURS;

		/// Blocks a buyer has to check a result (or a checkpoint) and object before it counts:
		/// meanwhile its holdback is withheld and, after a result, the lease's collateral stays
		/// locked. An order may ask for longer, up to `MaxVerdictWindow` (7 days); a value above
		/// that is taken as that.
		#[codec(index = 3)]
		pub static VerdictWindow: BlockNumber = 2 * HOURS;

		/// The least bond a buyer posts to dispute a result (it is at least the disputed
		/// lease's price for twice the time it ran: the verifier's pay).
		#[codec(index = 4)]
		pub static DisputeBond: Balance = STINT;

		/// Blocks the replicas of a replicated order have to reveal their sealed results once
		/// the reveals open (a worker reveals within seconds; this covers a restart).
		#[codec(index = 5)]
		pub static RevealWindow: BlockNumber = 10 * MINUTES;
	}

	/// `pallet-streams`.
	#[dynamic_pallet_params]
	#[codec(index = 1)]
	pub mod streams {
		/// Blocks a depleted stream waits for a top-up before it closes.
		#[codec(index = 0)]
		pub static GracePeriod: BlockNumber = 10 * MINUTES;
	}
}

/// `G`'s value, held between `Min` and `Max`.
pub struct Clamped<G, Min, Max>(core::marker::PhantomData<(G, Min, Max)>);

impl<V: Ord, G: Get<V>, Min: Get<V>, Max: Get<V>> Get<V> for Clamped<G, Min, Max> {
	fn get() -> V {
		G::get().clamp(Min::get(), Max::get())
	}
}

/// The parameter the pallet's benchmarks set.
#[cfg(feature = "runtime-benchmarks")]
impl Default for RuntimeParameters {
	fn default() -> Self {
		RuntimeParameters::Leases(dynamic_params::leases::Parameters::AckDeadline(
			dynamic_params::leases::AckDeadline,
			Some(10 * MINUTES),
		))
	}
}

impl pallet_parameters::Config for Runtime {
	type RuntimeEvent = RuntimeEvent;
	type RuntimeParameters = RuntimeParameters;
	/// Root only (governance; sudo on development chains).
	type AdminOrigin = AsEnsureOriginWithArg<EnsureRoot<AccountId>>;
	/// The pallet's own weights are not public; a set costs one storage write (issue 13 measures it).
	type WeightInfo = ();
}
