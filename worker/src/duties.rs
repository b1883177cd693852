//! What to do about each lease, decided from state alone: [`plan`] takes the chain's view of a
//! lease at a finalized block, the journal's, and the executor's, and returns the actions that
//! bring them together. It reads nothing and changes nothing, so it is table-tested, and it is
//! idempotent: the runner calls it at every finalized block and runs only what it returns.
//!
//! Two rules carry the design:
//! - A job is stopped, paused or given up only on what a finalized block says. A lease the chain
//!   could not be read for ([`OnChain::Unknown`]) is left exactly as it is: an RPC blip never
//!   tears down a healthy job.
//! - Nothing is done twice: a slot already signed is re-sent, never signed again, and a lease
//!   with an action in flight gets no new one.

use stint_primitives::{BlockNumber, LeaseId, NextDuty, StopReason};

use crate::{
	executor::JobState,
	journal::{LeaseEntry, Phase},
};

/// A lease as the chain says at a finalized block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnChain {
	/// Live, assigned to this worker key, with its next duty.
	Live {
		next: NextDuty<BlockNumber>,
		/// The most blocks between checkpoints (open-ended leases).
		checkpoint_interval: BlockNumber,
	},
	/// Read, and no longer live (ended with a result, closed, out of funds, slashed…).
	Ended,
	/// Not read (the node did not answer): touch nothing.
	Unknown,
}

/// Everything [`plan`] needs about one lease.
#[derive(Clone, Copy, Debug)]
pub struct LeaseView<'a> {
	pub id: LeaseId,
	pub chain: OnChain,
	pub entry: Option<&'a LeaseEntry>,
	/// The job as the executor sees it, if it has one for this lease.
	pub job: Option<JobState>,
	/// An action on this lease is still running.
	pub in_flight: bool,
	/// The operator said to take over this lease (`--adopt`).
	pub adopt: bool,
	/// The journal's entry does not describe the lease the chain holds under this id (its
	/// buyer, devices or job differ): it was made from a best block that a reorganisation
	/// dropped, and the id now names another lease.
	pub stale: bool,
}

/// Where the chain is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now {
	pub block: BlockNumber,
	/// Seconds since the Unix epoch (for the retention of ended leases' outputs).
	pub unix: u64,
	pub retention_secs: u64,
}

/// One step for the runner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
	/// A new lease: journal it, resolve the image, fetch and check the inputs, check the disk.
	Prepare(LeaseId),
	/// Acknowledge it (or send the signed acknowledgement again).
	Ack(LeaseId),
	/// Start the job.
	Start(LeaseId),
	/// The job stopped: collect its exit code and logs, build the receipt, sign once, submit
	/// the final result (or send the signed one again).
	Commit(LeaseId),
	/// Sign checkpoint `sequence` (once) and submit it.
	Checkpoint(LeaseId, u32),
	/// Stop the job (SIGTERM, grace, SIGKILL) for `reason`.
	Stop(LeaseId, StopReason),
	Pause(LeaseId),
	Unpause(LeaseId),
	/// The job vanished: it is reported with the reserved code for a lost container.
	Lost(LeaseId),
	/// The lease ended on chain: stop whatever runs and keep the outputs for the retention.
	Finish(LeaseId),
	/// The retention is over: remove the job, its files and its journal entry.
	Forget(LeaseId),
	/// Take over a lease acknowledged elsewhere with this key (`--adopt`).
	Adopt(LeaseId),
	/// The journal's entry was made from a dropped fork and nothing has run yet: make it anew
	/// from the lease at this block (keeping the signed acknowledgement, which names only the
	/// id) and prepare again.
	Renew(LeaseId),
	/// Something the worker must not fix by itself.
	Alert(LeaseId, String),
}

/// Blocks before its ack deadline at which a lease still being prepared is alerted about.
pub const ACK_MARGIN: BlockNumber = 2;

/// The actions for one lease.
pub fn plan(view: &LeaseView, now: &Now) -> Vec<Action> {
	use Action::*;
	let id = view.id;
	if view.in_flight {
		// Preparation (an image pull, the inputs) still running as the ack deadline nears: the
		// operator hears of it before the lease is lost, not after.
		return match (view.chain, view.entry.map(|entry| entry.phase)) {
			(OnChain::Live { next: NextDuty::Ack { by }, .. }, Some(Phase::Preparing))
				if now.block.saturating_add(ACK_MARGIN) >= by =>
			{
				vec![Alert(
					id,
					format!(
						"still preparing at block {} with the ack deadline at block {by}: the \
						 lease is lost unless preparation ends in time",
						now.block
					),
				)]
			}
			_ => Vec::new(),
		};
	}
	let (next, interval) = match view.chain {
		OnChain::Unknown => return Vec::new(),
		OnChain::Ended => return plan_ended(view, now),
		OnChain::Live { next, checkpoint_interval } => (next, checkpoint_interval),
	};
	let Some(entry) = view.entry else {
		return match next {
			NextDuty::Ack { .. } => vec![Prepare(id)],
			_ if view.adopt => vec![Adopt(id)],
			_ => vec![Alert(
				id,
				"a live lease on this worker key that this journal never acknowledged: left \
				 alone (restart with --adopt <lease> to take it over)"
					.into(),
			)],
		};
	};
	if view.stale {
		return match entry.phase {
			Phase::Preparing | Phase::Prepared | Phase::OrderFault | Phase::Acked => {
				vec![Renew(id)]
			}
			_ => vec![Alert(
				id,
				"the journal's job for this lease id was prepared from a fork that is no longer \
				 canonical and has already run; the lease on chain is another (buyer, devices or \
				 job differ): left alone"
					.into(),
			)],
		};
	}
	let job = view.job;
	match (next, entry.phase) {
		(_, Phase::Done) => Vec::new(),
		// Not acknowledged yet.
		// Past the deadline (the next block is later than `by`) an ack can only be refused.
		(NextDuty::Ack { by }, _) if now.block >= by => vec![Alert(
			id,
			format!("not acknowledged by block {by}, its deadline: the chain ends the lease"),
		)],
		(NextDuty::Ack { .. }, Phase::Preparing) => vec![Prepare(id)],
		(NextDuty::Ack { .. }, Phase::Prepared | Phase::OrderFault | Phase::Acked) => {
			vec![Ack(id)]
		}
		// Acknowledged, and further along: the finalized block has not caught up yet.
		(NextDuty::Ack { .. }, _) => Vec::new(),
		// Acknowledged, but not by this journal: it never signed an ack, or the chain refused
		// the one it signed. Another worker with this key has the lease (and perhaps runs it):
		// running it here too, or reporting an order fault over it, would end the other's job.
		(_, Phase::Preparing | Phase::Prepared | Phase::OrderFault) if !acked_here(entry) => {
			match view.adopt {
				true => vec![Adopt(id)],
				false => vec![Alert(
					id,
					"acknowledged on chain, but not by this journal (acknowledged elsewhere with \
					 this key): left alone (restart with --adopt <lease> to take it over)"
						.into(),
				)],
			}
		}
		// An open-ended lease whose checkpoint is overdue (the next block is later than `by`):
		// the chain refuses a checkpoint or a result now, each a fee for nothing, and the missed
		// one may be reported. The job is left as it is until the lease ends.
		(
			NextDuty::Checkpoint { sequence, by },
			Phase::OrderFault | Phase::Exited | Phase::Running | Phase::Paused,
		) if now.block >= by => vec![Alert(
			id,
			format!(
				"checkpoint {sequence} was due by block {by}: too late to report, the lease may \
				 be reported and the bond slashed"
			),
		)],
		// A fixed lease past its result deadline: a result now is a fee for a certain refusal.
		// A job still running is stopped all the same at its end (the rows below).
		(NextDuty::Result { by, .. }, Phase::OrderFault | Phase::Exited) if now.block >= by => {
			vec![Alert(
				id,
				format!(
					"the result was due by block {by}: too late to submit, the lease may be \
					 reported and the bond slashed"
				),
			)]
		}
		// Acknowledged: the order was at fault, report it; otherwise run.
		(_, Phase::OrderFault) => vec![Commit(id)],
		(NextDuty::Suspended, Phase::Prepared | Phase::Acked) => Vec::new(),
		(_, Phase::Prepared | Phase::Acked) => vec![Start(id)],
		(_, Phase::Preparing) => vec![Prepare(id)],
		(_, Phase::Exited) => vec![Commit(id)],
		(next, Phase::Running | Phase::Paused) => match job {
			Some(JobState::Exited { .. }) => vec![Commit(id)],
			None | Some(JobState::Missing) => vec![Lost(id)],
			Some(JobState::Created) => vec![Start(id)],
			Some(JobState::Running) | Some(JobState::Paused) => {
				let paused = job == Some(JobState::Paused);
				match next {
					NextDuty::Suspended if !paused => vec![Pause(id)],
					NextDuty::Suspended => Vec::new(),
					// Past its end a fixed lease's job stops, paused or not (unpaused first, it
					// would run a block for nothing).
					NextDuty::Result { ends_at, .. } if now.block >= ends_at => {
						vec![Stop(id, StopReason::TimeLimit)]
					}
					_ if paused => vec![Unpause(id)],
					NextDuty::Checkpoint { sequence, by }
						if now.block >= by.saturating_sub(interval / 2) =>
					{
						vec![Checkpoint(id, sequence)]
					}
					_ => Vec::new(),
				}
			}
		},
	}
}

/// Whether this journal's acknowledgement of the lease may be the one the chain holds: it signed
/// one, and the chain has not refused it.
fn acked_here(entry: &LeaseEntry) -> bool {
	entry.extrinsics.get("ack").is_some_and(|ack| ack.refused.is_none())
}

fn plan_ended(view: &LeaseView, now: &Now) -> Vec<Action> {
	let Some(entry) = view.entry else { return Vec::new() };
	match entry.phase {
		// An early result whose verdict is still pending is kept until the worker has
		// confirmed it (or seen it settled): forgotten, it would never count.
		Phase::Done if entry.reports.contains_key("final") && !entry.verdict_settled => Vec::new(),
		Phase::Done => match entry.ended_at {
			Some(ended) if now.unix >= ended.saturating_add(now.retention_secs) => {
				vec![Action::Forget(view.id)]
			}
			_ => Vec::new(),
		},
		_ => vec![Action::Finish(view.id)],
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use stint_primitives::{ExecutorKind, ReportKind, ResultCommitment};

	const NOW: Now = Now { block: 100, unix: 1_000_000, retention_secs: 3600 };
	const ACK: OnChain = OnChain::Live { next: NextDuty::Ack { by: 110 }, checkpoint_interval: 50 };
	const FIXED: OnChain =
		OnChain::Live { next: NextDuty::Result { ends_at: 150, by: 160 }, checkpoint_interval: 50 };
	const FIXED_OVER: OnChain =
		OnChain::Live { next: NextDuty::Result { ends_at: 100, by: 110 }, checkpoint_interval: 50 };
	const SUSPENDED: OnChain = OnChain::Live { next: NextDuty::Suspended, checkpoint_interval: 50 };

	fn open(by: BlockNumber) -> OnChain {
		OnChain::Live { next: NextDuty::Checkpoint { sequence: 3, by }, checkpoint_interval: 50 }
	}

	/// An entry in `phase`, with the acknowledgement it signed once past `Preparing`.
	fn entry(phase: Phase) -> LeaseEntry {
		let mut entry =
			LeaseEntry::new(7, [1; 32], crate::journal::tests_spec(), vec![], ExecutorKind::Docker);
		entry.phase = phase;
		if phase != Phase::Preparing {
			entry.extrinsics.insert("ack".into(), signed_ack(None));
		}
		entry
	}

	fn signed_ack(refused: Option<&str>) -> crate::journal::SignedExtrinsic {
		crate::journal::SignedExtrinsic {
			slot: "ack".into(),
			bytes: vec![1, 2, 3],
			hash: vec![4; 32],
			nonce: 0,
			included: refused.is_some(),
			included_ms: None,
			valid_until: None,
			refused: refused.map(str::to_string),
		}
	}

	fn final_report() -> crate::journal::SignedReport {
		crate::journal::SignedReport {
			kind: ReportKind::Final,
			commitment: ResultCommitment::default(),
			signature: vec![0; 64],
			receipt: vec![],
		}
	}

	fn plan_of(chain: OnChain, entry: Option<&LeaseEntry>, job: Option<JobState>) -> Vec<Action> {
		plan(
			&LeaseView { id: 7, chain, entry, job, in_flight: false, adopt: false, stale: false },
			&NOW,
		)
	}

	use Action::*;
	use JobState as J;
	use Phase::*;

	/// A row: what it shows, the chain, the journal's phase, the container, the plan.
	type Row = (&'static str, OnChain, Option<Phase>, Option<JobState>, Vec<Action>);

	#[test]
	fn the_table() {
		let exited = Some(J::Exited { code: 0, oom: false });
		#[rustfmt::skip]
		let table: Vec<Row> = vec![
			("new lease: prepare", ACK, None, None, vec![Prepare(7)]),
			("prepared: ack", ACK, Some(Prepared), None, vec![Ack(7)]),
			("order at fault: still ack", ACK, Some(OrderFault), None, vec![Ack(7)]),
			("ack sent, not seen yet: send again", ACK, Some(Acked), None, vec![Ack(7)]),
			("running, finality behind: wait", ACK, Some(Running), Some(J::Running), vec![]),
			("committed, finality behind: wait", ACK, Some(Exited), None, vec![]),
			("acked: start", FIXED, Some(Acked), None, vec![Start(7)]),
			("acked, not yet seen in the journal: start", open(140), Some(Prepared), None, vec![Start(7)]),
			("order at fault, acked: report it", FIXED, Some(OrderFault), None, vec![Commit(7)]),
			("running, before its end: nothing", FIXED, Some(Running), Some(J::Running), vec![]),
			("running, at its end: stop", FIXED_OVER, Some(Running), Some(J::Running), vec![Stop(7, StopReason::TimeLimit)]),
			("exited: commit", FIXED, Some(Running), exited, vec![Commit(7)]),
			("exited while the worker was down: commit", open(140), Some(Running), exited, vec![Commit(7)]),
			("committing: commit (re-send)", FIXED, Some(Exited), exited, vec![Commit(7)]),
			("vanished: lost", FIXED, Some(Running), Some(J::Missing), vec![Lost(7)]),
			("not found at all: lost", FIXED, Some(Running), None, vec![Lost(7)]),
			("suspended: pause", SUSPENDED, Some(Running), Some(J::Running), vec![Pause(7)]),
			("suspended and paused: nothing", SUSPENDED, Some(Paused), Some(J::Paused), vec![]),
			("resumed: unpause", FIXED, Some(Paused), Some(J::Paused), vec![Unpause(7)]),
			("suspended before start: wait", SUSPENDED, Some(Acked), None, vec![]),
			("open-ended, checkpoint far: nothing", open(140), Some(Running), Some(J::Running), vec![]),
			("open-ended, half the interval left: checkpoint", open(125), Some(Running), Some(J::Running), vec![Checkpoint(7, 3)]),
			("ended on chain while running: finish", OnChain::Ended, Some(Running), Some(J::Running), vec![Finish(7)]),
			("ended on chain after commit: finish", OnChain::Ended, Some(Exited), exited, vec![Finish(7)]),
			("ended and done: keep", OnChain::Ended, Some(Done), exited, vec![]),
			("not ours, ended: nothing", OnChain::Ended, None, None, vec![]),
			("unknown: touch nothing", OnChain::Unknown, Some(Running), Some(J::Running), vec![]),
			("unknown, exited: still nothing", OnChain::Unknown, Some(Running), exited, vec![]),
			("done: nothing", FIXED, Some(Done), exited, vec![]),
		];
		for (name, chain, phase, job, expected) in table {
			let entry = phase.map(entry);
			assert_eq!(plan_of(chain, entry.as_ref(), job), expected, "{name}");
		}
	}

	#[test]
	fn a_lease_this_journal_never_saw_is_left_alone_unless_adopted() {
		let actions = plan_of(FIXED, None, Some(J::Running));
		assert!(matches!(actions.as_slice(), [Alert(7, why)] if why.contains("--adopt")));
		let view = LeaseView {
			id: 7,
			chain: FIXED,
			entry: None,
			job: None,
			in_flight: false,
			adopt: true,
			stale: false,
		};
		assert_eq!(plan(&view, &NOW), vec![Adopt(7)]);
	}

	#[test]
	fn nothing_is_planned_while_an_action_is_in_flight() {
		let entry = entry(Running);
		let view = LeaseView {
			id: 7,
			chain: FIXED_OVER,
			entry: Some(&entry),
			job: Some(J::Running),
			in_flight: true,
			adopt: false,
			stale: false,
		};
		assert_eq!(plan(&view, &NOW), vec![]);
	}

	#[test]
	fn the_ack_deadline_is_watched() {
		let ack_by = |by| OnChain::Live { next: NextDuty::Ack { by }, checkpoint_interval: 50 };
		// Preparation still running two blocks before the deadline: the operator is told.
		let preparing = entry(Preparing);
		let view = |chain| LeaseView {
			id: 7,
			chain,
			entry: Some(&preparing),
			job: None,
			in_flight: true,
			adopt: false,
			stale: false,
		};
		assert_eq!(plan(&view(ack_by(NOW.block + ACK_MARGIN + 1)), &NOW), vec![]);
		let near = plan(&view(ack_by(NOW.block + ACK_MARGIN)), &NOW);
		assert!(matches!(near.as_slice(), [Alert(7, why)] if why.contains("still preparing")));
		// At the deadline's block or later no ack is sent: it could only be refused.
		for phase in [Preparing, Prepared, OrderFault, Acked] {
			let late = plan_of(ack_by(NOW.block), Some(&entry(phase)), None);
			assert!(
				matches!(late.as_slice(), [Alert(7, why)] if why.contains("not acknowledged")),
				"{phase:?}: {late:?}"
			);
		}
		assert_eq!(plan_of(ack_by(NOW.block + 1), Some(&entry(Prepared)), None), vec![Ack(7)]);
	}

	#[test]
	fn past_an_overdue_checkpoint_nothing_is_sent_but_it_is_said() {
		let plan = plan_of(open(NOW.block), Some(&entry(Running)), Some(J::Running));
		assert!(
			matches!(plan.as_slice(), [Alert(7, why)] if why.contains("checkpoint 3 was due")),
			"{plan:?}"
		);
		// A job that exited after the deadline: no result either (the chain refuses it).
		let plan = plan_of(open(NOW.block), Some(&entry(Exited)), None);
		assert!(matches!(plan.as_slice(), [Alert(7, _)]), "{plan:?}");
		let exited = Some(J::Exited { code: 0, oom: false });
		let plan = plan_of(open(NOW.block), Some(&entry(Running)), exited);
		assert!(matches!(plan.as_slice(), [Alert(7, _)]), "{plan:?}");
		let plan = plan_of(open(NOW.block + 1), Some(&entry(Running)), Some(J::Running));
		assert_eq!(plan, vec![Checkpoint(7, 3)]);
		let plan = plan_of(open(NOW.block + 1), Some(&entry(Exited)), None);
		assert_eq!(plan, vec![Commit(7)]);
	}

	#[test]
	fn past_a_fixed_leases_result_deadline_no_result_is_sent_but_it_is_said() {
		let late = OnChain::Live {
			next: NextDuty::Result { ends_at: 90, by: NOW.block },
			checkpoint_interval: 50,
		};
		for phase in [Exited, OrderFault] {
			let plan = plan_of(late, Some(&entry(phase)), None);
			assert!(
				matches!(plan.as_slice(), [Alert(7, why)] if why.contains("result was due")),
				"{phase:?}: {plan:?}"
			);
		}
		// Still running past its end: stopped all the same.
		let plan = plan_of(late, Some(&entry(Running)), Some(J::Running));
		assert_eq!(plan, vec![Stop(7, StopReason::TimeLimit)]);
		let in_time = OnChain::Live {
			next: NextDuty::Result { ends_at: 90, by: NOW.block + 1 },
			checkpoint_interval: 50,
		};
		assert_eq!(plan_of(in_time, Some(&entry(Exited)), None), vec![Commit(7)]);
	}

	#[test]
	fn outputs_are_kept_for_the_retention_then_forgotten() {
		let mut done = entry(Done);
		done.ended_at = Some(NOW.unix - 3599);
		assert_eq!(plan_of(OnChain::Ended, Some(&done), None), vec![]);
		done.ended_at = Some(NOW.unix - 3600);
		assert_eq!(plan_of(OnChain::Ended, Some(&done), None), vec![Forget(7)]);
	}

	#[test]
	fn a_result_whose_verdict_is_pending_is_kept_past_the_retention_until_it_is_settled() {
		let mut done = entry(Done);
		done.ended_at = Some(NOW.unix - 7200);
		done.reports.insert("final".into(), final_report());
		assert_eq!(plan_of(OnChain::Ended, Some(&done), None), vec![]);
		done.verdict_settled = true;
		assert_eq!(plan_of(OnChain::Ended, Some(&done), None), vec![Forget(7)]);
	}

	#[test]
	fn a_lease_acknowledged_by_another_journal_with_this_key_is_left_alone() {
		fn view(entry: &LeaseEntry, adopt: bool) -> LeaseView<'_> {
			LeaseView {
				id: 7,
				chain: FIXED,
				entry: Some(entry),
				job: None,
				in_flight: false,
				adopt,
				stale: false,
			}
		}
		let elsewhere = |actions: &[Action]| matches!(actions, [Alert(7, why)] if why.contains("acknowledged elsewhere"));
		for phase in [Preparing, Prepared, OrderFault] {
			// This journal never signed an ack: the chain's is another worker's.
			let mut never = entry(phase);
			never.extrinsics.clear();
			assert!(elsewhere(&plan(&view(&never, false), &NOW)), "{phase:?}");
			assert_eq!(plan(&view(&never, true), &NOW), vec![Adopt(7)], "{phase:?}");
			// It signed one and the chain refused it (the lease was no longer awaiting it).
			let mut refused = entry(phase);
			refused.extrinsics.insert("ack".into(), signed_ack(Some("Leases.NotAwaitingAck")));
			assert!(elsewhere(&plan(&view(&refused, false), &NOW)), "{phase:?}");
		}
		// Its own ack, sent and not yet seen included: the job is this worker's to run.
		assert_eq!(plan(&view(&entry(Prepared), false), &NOW), vec![Start(7)]);
		assert_eq!(plan(&view(&entry(OrderFault), false), &NOW), vec![Commit(7)]);
		// Before the deadline nothing is elsewhere yet: prepare and acknowledge as usual.
		let mut unsigned = entry(Prepared);
		unsigned.extrinsics.clear();
		assert_eq!(plan_of(ACK, Some(&unsigned), None), vec![Ack(7)]);
	}

	#[test]
	fn an_entry_made_from_a_dropped_fork_is_made_anew_unless_its_job_ran() {
		for (phase, job, expected) in [
			(Preparing, None, Some(Renew(7))),
			(Prepared, None, Some(Renew(7))),
			(OrderFault, None, Some(Renew(7))),
			(Acked, None, Some(Renew(7))),
			(Running, Some(J::Running), None),
			(Exited, Some(J::Exited { code: 0, oom: false }), None),
		] {
			let entry = entry(phase);
			let view = LeaseView {
				id: 7,
				chain: FIXED,
				entry: Some(&entry),
				job,
				in_flight: false,
				adopt: false,
				stale: true,
			};
			let actions = plan(&view, &NOW);
			match expected {
				Some(action) => assert_eq!(actions, vec![action], "{phase:?}"),
				None => assert!(
					matches!(actions.as_slice(), [Alert(7, why)] if why.contains("no longer canonical")),
					"{phase:?}: {actions:?}"
				),
			}
		}
		// An ended lease is finished whatever the entry says.
		let running = entry(Running);
		let view = LeaseView {
			id: 7,
			chain: OnChain::Ended,
			entry: Some(&running),
			job: Some(J::Running),
			in_flight: false,
			adopt: false,
			stale: true,
		};
		assert_eq!(plan(&view, &NOW), vec![Finish(7)]);
	}

	#[test]
	fn a_paused_job_past_its_fixed_end_is_stopped_not_resumed() {
		let plan = plan_of(FIXED_OVER, Some(&entry(Paused)), Some(J::Paused));
		assert_eq!(plan, vec![Stop(7, StopReason::TimeLimit)]);
		let plan = plan_of(FIXED, Some(&entry(Paused)), Some(J::Paused));
		assert_eq!(plan, vec![Unpause(7)]);
	}

	#[test]
	fn planning_twice_gives_the_same_actions() {
		let mut committed = entry(Exited);
		committed.reports.insert("final".into(), final_report());
		let first = plan_of(FIXED, Some(&committed), Some(J::Exited { code: 0, oom: false }));
		let second = plan_of(FIXED, Some(&committed), Some(J::Exited { code: 0, oom: false }));
		assert_eq!(first, second);
	}
}
