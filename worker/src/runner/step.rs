//! Why a lease's step stopped short, and the one policy that says what follows: try again at
//! the next block, alert the operator, or end the lease with a reserved exit code. Every lease
//! action ([`Worker::act`], and the commit a job's supervisor makes at its exit) goes through
//! [`Worker::after_step`]; no step decides on its own how its failure is said or counted.

use super::*;

/// Why a step of a lease did not finish.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
	/// The node: unreachable, slow, or the pool did not take the transaction. Passing.
	#[error("the chain: {0}")]
	Chain(String),
	/// The chain refused a call by name: it is in a state the plan did not expect. The next
	/// block's plan reads it again; sending the same call again would only pay another fee.
	#[error("the chain refused it: {0}")]
	Refused(String),
	/// The executor (its engine, the job's container or process). Passing, as a rule.
	#[error("the executor: {0}")]
	Executor(String),
	/// This machine's journal or disk: an operator must look.
	#[error("{0}")]
	Local(String),
	/// The step was asked for without what it needs (a duty, a journal entry).
	#[error("{0}")]
	Plan(String),
	/// The order's own doing, which no retry mends: its result is this reserved code.
	#[error("the order's fault: {1}")]
	Order(ReservedExit, String),
	/// The job is gone or never started: reported lost, the provider's fault.
	#[error("{0}")]
	Lost(String),
}

/// What follows a failed step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
	/// Logged and counted; the next block's plan tries again.
	Retry,
	/// Said once as an alert (per lease and message) and counted; the next plan tries again.
	Alert,
	/// The lease ends now with this reserved exit code.
	End(ReservedExit),
}

impl StepError {
	/// The one rule.
	pub fn policy(&self) -> Policy {
		match self {
			Self::Chain(_) | Self::Executor(_) => Policy::Retry,
			Self::Refused(_) | Self::Local(_) | Self::Plan(_) => Policy::Alert,
			Self::Order(code, _) => Policy::End(*code),
			Self::Lost(_) => Policy::End(ReservedExit::ContainerLost),
		}
	}

	/// The component it is counted under (`stint_worker_errors_total{component}`).
	pub fn component(&self) -> &'static str {
		match self {
			Self::Chain(_) | Self::Refused(_) => "chain",
			Self::Executor(_) | Self::Order(..) | Self::Lost(_) => "executor",
			Self::Local(_) => "journal",
			Self::Plan(_) => "duties",
		}
	}

	pub fn executor(why: impl std::fmt::Display) -> Self {
		Self::Executor(why.to_string())
	}

	pub fn local(why: impl std::fmt::Display) -> Self {
		Self::Local(why.to_string())
	}
}

impl From<crate::journal::JournalError> for StepError {
	fn from(error: crate::journal::JournalError) -> Self {
		Self::Local(error.to_string())
	}
}

impl From<StartError> for StepError {
	fn from(error: StartError) -> Self {
		match error {
			StartError::Unstartable(why) => Self::Order(ReservedExit::JobUnstartable, why),
			StartError::Other(why) => Self::Executor(why),
		}
	}
}

/// A missing piece the plan should have had.
pub(super) fn missing(why: &str) -> StepError {
	StepError::Plan(why.to_string())
}

impl<E: Executor> Worker<E> {
	/// Applies [`StepError::policy`] to the failure of step `name` of lease `id`.
	pub(super) async fn after_step(self: &Arc<Self>, id: LeaseId, name: &str, error: StepError) {
		self.metrics.errors.with_label_values(&[error.component()]).inc();
		match error.policy() {
			Policy::Retry => log::error(error.component(), Some(id), format!("{name}: {error}")),
			Policy::Alert => self.alert_once(id, &format!("{name}: {error}")),
			Policy::End(code) => {
				let outcome = match &error {
					StepError::Lost(why) => {
						log::alert("executor", Some(id), format!("{why}: reporting it lost"));
						"lost"
					}
					_ => {
						log::warn("executor", Some(id), format!("{name}: {error}"));
						"order_fault"
					}
				};
				// Its own failure is not turned into a third step: the next plan commits.
				if let Err(again) = self.report_reserved(id, code, outcome).await {
					self.metrics.errors.with_label_values(&[again.component()]).inc();
					log::error(again.component(), Some(id), format!("{name}: {again}"));
				}
			}
		}
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn one_policy_for_every_step_failure() {
		let cases = [
			(StepError::Chain("no node".into()), Policy::Retry, "chain"),
			(StepError::executor("engine down"), Policy::Retry, "executor"),
			(StepError::Refused("Leases.LeaseEnded".into()), Policy::Alert, "chain"),
			(StepError::local("disk full"), Policy::Alert, "journal"),
			(missing("no duty to prepare from"), Policy::Alert, "duties"),
			(
				StepError::from(StartError::Unstartable("no such file".into())),
				Policy::End(ReservedExit::JobUnstartable),
				"executor",
			),
			(StepError::Lost("gone".into()), Policy::End(ReservedExit::ContainerLost), "executor"),
		];
		for (error, policy, component) in cases {
			assert_eq!((error.policy(), error.component()), (policy, component), "{error:?}");
		}
		assert!(matches!(
			StepError::from(StartError::Other("no GPU".into())),
			StepError::Executor(_)
		));
	}
}
