//! The worker's background tasks: each has a name, and its death is noticed; a kind of task
//! that must not run twice at once (a bidding round, planning a best block, a settlement beat,
//! a round of reveals) holds a [`SingleFlight`] guard, freed when the task ends, however it
//! ends: a panicking round leaves nothing switched off for good.

use std::{
	future::Future,
	sync::{
		atomic::{AtomicBool, Ordering},
		Arc,
	},
};

use crate::{log, metrics::Metrics};

/// One task of a kind at a time.
#[derive(Clone, Debug, Default)]
pub struct SingleFlight(Arc<AtomicBool>);

/// The right to run a [`SingleFlight`]'s task, given back when dropped.
#[derive(Debug)]
pub struct Flight(Arc<AtomicBool>);

impl SingleFlight {
	/// The guard, unless a task of this kind holds it already.
	pub fn try_begin(&self) -> Option<Flight> {
		(!self.0.swap(true, Ordering::AcqRel)).then(|| Flight(self.0.clone()))
	}
}

impl Drop for Flight {
	fn drop(&mut self) {
		self.0.store(false, Ordering::Release);
	}
}

/// Runs `task` in the background as `name`. A panic in it is said (an error, counted as
/// `stint_worker_errors_total{component="panic"}`) rather than lost with the task; the guards it
/// held are freed by the unwinding.
pub fn spawn_named(
	metrics: &Metrics,
	name: &'static str,
	task: impl Future<Output = ()> + Send + 'static,
) {
	let handle = tokio::spawn(task);
	let metrics = metrics.clone();
	tokio::spawn(async move {
		if let Err(error) = handle.await {
			if error.is_panic() {
				let panic = error.into_panic();
				let why = panic
					.downcast_ref::<&str>()
					.map(|why| why.to_string())
					.or_else(|| panic.downcast_ref::<String>().cloned())
					.unwrap_or_else(|| "no message".into());
				metrics.errors.with_label_values(&["panic"]).inc();
				log::error("worker", None, format!("the task {name} panicked: {why}"));
			}
		}
	});
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn one_flight_at_a_time_and_free_again_after_it() {
		let kind = SingleFlight::default();
		let flight = kind.try_begin().expect("free");
		assert!(kind.try_begin().is_none(), "a second one at once");
		drop(flight);
		assert!(kind.try_begin().is_some(), "free again");
	}

	#[tokio::test]
	async fn a_task_that_panics_frees_its_kind_and_is_counted() {
		let metrics = Metrics::new();
		let kind = SingleFlight::default();
		let flight = kind.try_begin().unwrap();
		spawn_named(&metrics, "test", async move {
			let _flight = flight;
			panic!("a bad round");
		});
		let panics = || metrics.errors.with_label_values(&["panic"]).get();
		for _ in 0..100 {
			if panics() == 1 {
				break;
			}
			tokio::time::sleep(std::time::Duration::from_millis(10)).await;
		}
		assert_eq!(panics(), 1);
		assert!(kind.try_begin().is_some(), "the panicked task's kind is free again");
	}
}
