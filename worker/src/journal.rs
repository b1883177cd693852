//! What the worker did, kept durably in an embedded database (redb) under the data directory:
//! per lease its duty state, container, exit, receipt, each signed report per (lease, kind,
//! sequence) and each signed extrinsic with its nonce. Every step is recorded (and the commit
//! flushed to disk) before the next is taken, so after a crash the worker signs nothing twice
//! and sends the same bytes again rather than a second transaction.
//!
//! One worker per journal: the database file is locked while open, and a second worker on it
//! refuses to start. `journal export` / `import` move a worker's state to another machine.

use std::{collections::BTreeMap, path::Path};

use redb::{Database, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use stint_primitives::{
	DeviceId, ExecutorKind, Instant, JobSpec, LeaseId, ReportKind, ResultCommitment, StopReason,
};

const LEASES: TableDefinition<u64, &[u8]> = TableDefinition::new("leases");
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");

/// Where the worker is with a lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
	/// Seen on chain, awaiting acknowledgement: the image and inputs are being prepared.
	Preparing,
	/// The image and inputs are ready: acknowledge.
	Prepared,
	/// The lease cannot run: the order was at fault (image or input unavailable), or the
	/// machine lacked what it bid with when the ack deadline came (`HostShort`, the
	/// provider's fault). Acknowledge, then report the reserved exit code without running
	/// anything. (The name predates the second case; journals keep it.)
	OrderFault,
	/// Acknowledged on chain; the job is not started yet.
	Acked,
	/// The job runs (in `container`).
	Running,
	/// The job is paused because the lease is suspended.
	Paused,
	/// The job stopped (`exit`): its result is to be committed.
	Exited,
	/// Nothing more to do: the result is on chain or the lease ended without one.
	Done,
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
	pub code: i32,
	pub reason: StopReason,
	pub at: Instant,
}

/// A report the worker signed: exactly one per (lease, kind).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedReport {
	pub kind: ReportKind,
	pub commitment: ResultCommitment,
	pub signature: Vec<u8>,
	/// The SCALE-encoded execution receipt whose hash the commitment carries.
	pub receipt: Vec<u8>,
}

/// An extrinsic the worker signed, before it was first sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedExtrinsic {
	/// What it does: `ack`, `final`, `checkpoint/<n>`.
	pub slot: String,
	pub bytes: Vec<u8>,
	pub hash: Vec<u8>,
	pub nonce: u64,
	/// Seen in a block (a best block: a reorganisation may still drop it).
	pub included: bool,
	/// When it was last seen in a block (Unix ms); `None` in journals written before this.
	#[serde(default)]
	pub included_ms: Option<u64>,
	/// The first block it can no longer be in (its era's end); `None` in journals written
	/// before eras were kept.
	#[serde(default)]
	pub valid_until: Option<u64>,
	/// In a block, and refused there (the call failed): why. Such bytes are never sent again,
	/// and the refusal is what the worker answers for the slot from then on.
	#[serde(default)]
	pub refused: Option<String>,
}

/// Everything the worker keeps about one lease.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseEntry {
	pub lease: LeaseId,
	/// The buyer's account (who may fetch the results).
	pub buyer: [u8; 32],
	pub spec: JobSpec,
	pub devices: Vec<DeviceId>,
	pub phase: Phase,
	pub executor: ExecutorKind,
	/// The image (or program) that runs, as the executor names it, and its digest.
	pub image_id: Option<String>,
	pub image_digest: [u8; 32],
	/// Why the lease cannot run, found while preparing, as a reserved exit code: the order's
	/// fault, or `HostShort` (see [`Phase::OrderFault`]).
	pub order_fault: Option<i32>,
	pub input_hashes: Vec<[u8; 32]>,
	pub container: Option<String>,
	pub started: Option<Instant>,
	pub exit: Option<Exit>,
	/// Why the worker stopped the job, when it did (time up, output over the limit): recorded
	/// before the stop, so the receipt says it even after a crash.
	#[serde(default)]
	pub stop_reason: Option<StopReason>,
	/// Signed reports by slot (`final`, `checkpoint/<n>`).
	pub reports: BTreeMap<String, SignedReport>,
	/// Signed extrinsics by slot.
	pub extrinsics: BTreeMap<String, SignedExtrinsic>,
	/// When the lease was seen ended on chain (Unix seconds): outputs are kept from then on for
	/// the retention period.
	pub ended_at: Option<u64>,
	/// Started elsewhere and adopted with `--adopt`.
	pub adopted: bool,
	/// The chain has recorded how the final result counts (an early result waits for the
	/// buyer's verdict, or for the objection window to pass and this worker to confirm it).
	#[serde(default)]
	pub verdict_settled: bool,
	/// A replica of a replicated order: its result is sealed with a salt, then revealed.
	#[serde(default)]
	pub replica: Option<ReplicaEntry>,
}

/// What a replica's sealed result names, kept from the moment the lease is first seen: after a
/// crash the worker seals and reveals with the same salt, so it never commits two seals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaEntry {
	/// The order, whose replicas are decided together.
	pub order: u64,
	/// The lease's provider, whose account the seal names.
	pub provider: [u8; 32],
	/// 32 random bytes: nobody can read the result in the seal before the reveal.
	pub salt: [u8; 32],
}

impl LeaseEntry {
	/// A lease first seen on chain.
	pub fn new(
		lease: LeaseId,
		buyer: [u8; 32],
		spec: JobSpec,
		devices: Vec<DeviceId>,
		executor: ExecutorKind,
	) -> Self {
		let image_digest = stint_primitives::image_digest(&spec.image).unwrap_or_default();
		Self {
			lease,
			buyer,
			spec,
			devices,
			phase: Phase::Preparing,
			executor,
			image_id: None,
			image_digest,
			order_fault: None,
			input_hashes: Vec::new(),
			container: None,
			started: None,
			exit: None,
			stop_reason: None,
			reports: BTreeMap::new(),
			extrinsics: BTreeMap::new(),
			ended_at: None,
			adopted: false,
			verdict_settled: false,
			replica: None,
		}
	}
}

/// The slot name of a report kind: `final` or `checkpoint/<n>`.
pub fn slot(kind: &ReportKind) -> String {
	match kind {
		ReportKind::Final => "final".into(),
		ReportKind::Checkpoint { sequence } => format!("checkpoint/{sequence}"),
	}
}

/// What can go wrong with the journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
	#[error("the journal {0} is in use by another worker (one worker per journal)")]
	Locked(String),
	#[error("journal: {0}")]
	Db(String),
	#[error("journal entry of lease {0} does not decode: {1}")]
	Corrupt(LeaseId, String),
	/// A second, different commitment for a report slot already signed: never signed.
	#[error(
		"lease {lease}: refusing to sign a second, different {slot} report (the first is kept)"
	)]
	ConflictingReport { lease: LeaseId, slot: String },
	#[error(
		"the export is of another chain (genesis {theirs}, this journal's is {ours}): not imported"
	)]
	OtherChain { ours: String, theirs: String },
	#[error("{0}")]
	Io(String),
}

fn db(error: impl std::fmt::Display) -> JournalError {
	JournalError::Db(error.to_string())
}

/// The journal: one redb file, locked while open.
pub struct Journal {
	db: Database,
}

/// The export format of `journal export`.
#[derive(Serialize, Deserialize)]
pub struct Export {
	pub meta: BTreeMap<String, String>,
	pub leases: Vec<LeaseEntry>,
}

impl Journal {
	/// Opens (or creates) the journal at `path`; refuses when another worker holds it.
	pub fn open(path: &Path) -> Result<Self, JournalError> {
		if let Some(parent) = path.parent() {
			std::fs::create_dir_all(parent).map_err(|e| JournalError::Io(e.to_string()))?;
		}
		let database = Database::create(path).map_err(|error| match error {
			redb::DatabaseError::DatabaseAlreadyOpen => {
				JournalError::Locked(path.display().to_string())
			}
			other => db(other),
		})?;
		let tx = database.begin_write().map_err(db)?;
		tx.open_table(LEASES).map_err(db)?;
		tx.open_table(META).map_err(db)?;
		tx.commit().map_err(db)?;
		Ok(Self { db: database })
	}

	/// The entry of `lease`, if the worker has seen it.
	pub fn get(&self, lease: LeaseId) -> Result<Option<LeaseEntry>, JournalError> {
		let tx = self.db.begin_read().map_err(db)?;
		let table = tx.open_table(LEASES).map_err(db)?;
		match table.get(lease).map_err(db)? {
			None => Ok(None),
			Some(bytes) => serde_json::from_slice(bytes.value())
				.map(Some)
				.map_err(|e| JournalError::Corrupt(lease, e.to_string())),
		}
	}

	/// Every entry, by lease id. One that does not decode is left out (and its lease, if live,
	/// is then one the journal never saw: left alone and alerted about), so that it stops no
	/// other lease's duties.
	pub fn all(&self) -> Result<Vec<LeaseEntry>, JournalError> {
		let tx = self.db.begin_read().map_err(db)?;
		let table = tx.open_table(LEASES).map_err(db)?;
		let mut entries = Vec::new();
		for row in table.iter().map_err(db)? {
			let (_, value) = row.map_err(db)?;
			if let Ok(entry) = serde_json::from_slice(value.value()) {
				entries.push(entry);
			}
		}
		Ok(entries)
	}

	/// Writes `entry`, durably, before returning. A signed report or extrinsic already stored
	/// for the lease is never forgotten by it (a writer that read the entry before it was
	/// signed cannot erase it): extrinsics go only through [`Self::drop_extrinsic`].
	pub fn put(&self, entry: &LeaseEntry) -> Result<(), JournalError> {
		self.update(entry.lease, |stored| {
			let mut merged = entry.clone();
			if let Some(stored) = stored {
				// A report signed is the slot's for good: the stored one wins.
				for (slot, report) in stored.reports {
					merged.reports.insert(slot, report);
				}
				for (slot, old) in stored.extrinsics {
					match merged.extrinsics.get(&slot) {
						None => {
							merged.extrinsics.insert(slot, old);
						}
						// The same bytes, known included: never back to not included.
						Some(new) if new.hash == old.hash && old.included && !new.included => {
							merged.extrinsics.insert(slot, old);
						}
						Some(_) => {}
					}
				}
			}
			Ok(Some(merged))
		})
		.map(|_| ())
	}

	/// Forgets the signed extrinsic of `lease` in `slot` (its bytes can never go in).
	pub fn drop_extrinsic(&self, lease: LeaseId, slot: &str) -> Result<(), JournalError> {
		self.update(lease, |stored| {
			Ok(stored.map(|mut entry| {
				entry.extrinsics.remove(slot);
				entry
			}))
		})
		.map(|_| ())
	}

	/// Reads the entry of `lease`, and writes what `change` makes of it, in one write
	/// transaction (`None`: nothing written); returns what was written.
	fn update(
		&self,
		lease: LeaseId,
		change: impl FnOnce(Option<LeaseEntry>) -> Result<Option<LeaseEntry>, JournalError>,
	) -> Result<Option<LeaseEntry>, JournalError> {
		let tx = self.db.begin_write().map_err(db)?;
		let written = {
			let mut table = tx.open_table(LEASES).map_err(db)?;
			let stored = match table.get(lease).map_err(db)? {
				Some(bytes) => serde_json::from_slice(bytes.value()).ok(),
				None => None,
			};
			let written = change(stored)?;
			if let Some(entry) = &written {
				let bytes = serde_json::to_vec(entry).expect("plain data serializes");
				table.insert(lease, bytes.as_slice()).map_err(db)?;
			}
			written
		};
		tx.commit().map_err(db)?;
		Ok(written)
	}

	/// Removes `lease` (once its retention is over).
	pub fn remove(&self, lease: LeaseId) -> Result<(), JournalError> {
		let tx = self.db.begin_write().map_err(db)?;
		{
			let mut table = tx.open_table(LEASES).map_err(db)?;
			table.remove(lease).map_err(db)?;
		}
		tx.commit().map_err(db)
	}

	/// A value kept beside the leases (the chain's genesis, the worker key).
	pub fn meta(&self, key: &str) -> Result<Option<String>, JournalError> {
		let tx = self.db.begin_read().map_err(db)?;
		let table = tx.open_table(META).map_err(db)?;
		Ok(table
			.get(key)
			.map_err(db)?
			.map(|value| String::from_utf8_lossy(value.value()).into_owned()))
	}

	pub fn set_meta(&self, key: &str, value: &str) -> Result<(), JournalError> {
		let tx = self.db.begin_write().map_err(db)?;
		{
			let mut table = tx.open_table(META).map_err(db)?;
			table.insert(key, value.as_bytes()).map_err(db)?;
		}
		tx.commit().map_err(db)
	}

	/// This journal's id: made once (from the time, the process and the path), kept forever.
	pub fn instance(&self) -> Result<String, JournalError> {
		if let Some(id) = self.meta("instance")? {
			return Ok(id);
		}
		let seed = format!("{:?} {} {:p}", std::time::SystemTime::now(), std::process::id(), self);
		let id = hex::encode(&stint_primitives::blake2_256(seed.as_bytes())[..6]);
		self.set_meta("instance", &id)?;
		Ok(id)
	}

	/// Records the report `kind` of `lease` with `commitment`, signing it with `sign` only if no
	/// report of that slot exists. The same commitment again returns the report signed first;
	/// a different one is refused ([`JournalError::ConflictingReport`]).
	pub fn sign_report_once(
		&self,
		lease: LeaseId,
		kind: ReportKind,
		commitment: ResultCommitment,
		receipt: Vec<u8>,
		sign: impl FnOnce() -> Vec<u8>,
	) -> Result<SignedReport, JournalError> {
		let slot = slot(&kind);
		let mut report = None;
		// Checked and written in one transaction: two callers cannot both sign the slot.
		self.update(lease, |stored| {
			let mut entry = stored
				.ok_or_else(|| JournalError::Db(format!("lease {lease} is not in the journal")))?;
			if let Some(existing) = entry.reports.get(&slot) {
				return match existing.commitment == commitment {
					true => {
						report = Some(existing.clone());
						Ok(None)
					}
					false => Err(JournalError::ConflictingReport { lease, slot: slot.clone() }),
				};
			}
			let signed = SignedReport { kind, commitment, signature: sign(), receipt };
			entry.reports.insert(slot.clone(), signed.clone());
			report = Some(signed);
			Ok(Some(entry))
		})?;
		Ok(report.expect("set on every path that returns Ok"))
	}

	/// Everything, for `journal export`.
	pub fn export(&self) -> Result<Export, JournalError> {
		let tx = self.db.begin_read().map_err(db)?;
		let table = tx.open_table(META).map_err(db)?;
		let mut meta = BTreeMap::new();
		for row in table.iter().map_err(db)? {
			let (key, value) = row.map_err(db)?;
			meta.insert(
				key.value().to_string(),
				String::from_utf8_lossy(value.value()).into_owned(),
			);
		}
		Ok(Export { meta, leases: self.all()? })
	}

	/// Loads an export into this (empty or older) journal; entries of the same lease are
	/// replaced, except that no report or extrinsic already signed here is forgotten. An export
	/// of another chain (a different genesis) is refused: its lease ids name other leases. What
	/// this journal already says of itself stays (its instance above all: the jobs it started
	/// on this machine carry it, and would be taken for lost under another).
	pub fn import(&self, export: &Export) -> Result<(), JournalError> {
		if let (Some(ours), Some(theirs)) = (self.meta("genesis")?, export.meta.get("genesis")) {
			if &ours != theirs {
				return Err(JournalError::OtherChain { ours, theirs: theirs.clone() });
			}
		}
		for (key, value) in &export.meta {
			if self.meta(key)?.is_none() {
				self.set_meta(key, value)?;
			}
		}
		for entry in &export.leases {
			self.put(entry)?;
		}
		Ok(())
	}
}

/// A job spec for tests.
#[cfg(test)]
pub(crate) fn tests_spec() -> JobSpec {
	tests::spec()
}

#[cfg(test)]
mod tests {
	use super::*;
	use stint_primitives::JobSpec;

	pub(crate) fn spec() -> JobSpec {
		JobSpec {
			image: format!("local/hello@sha256:{}", "ab".repeat(32))
				.into_bytes()
				.try_into()
				.unwrap(),
			command: Default::default(),
			env: Default::default(),
			inputs: Default::default(),
			max_output_bytes: 1 << 20,
		}
	}

	fn commitment(exit_code: i32) -> ResultCommitment {
		ResultCommitment { exit_code, ..Default::default() }
	}

	#[test]
	fn entries_survive_reopening_and_a_second_worker_is_refused() {
		let dir = tempfile::tempdir().unwrap();
		let path = dir.path().join("journal.redb");
		let journal = Journal::open(&path).unwrap();
		let entry = LeaseEntry::new(3, [1; 32], spec(), vec![[2; 32]], ExecutorKind::Docker);
		journal.put(&entry).unwrap();
		journal.set_meta("genesis", "0xabc").unwrap();
		assert!(matches!(Journal::open(&path), Err(JournalError::Locked(_))));
		drop(journal);
		let journal = Journal::open(&path).unwrap();
		assert_eq!(journal.get(3).unwrap(), Some(entry.clone()));
		assert_eq!(journal.get(4).unwrap(), None);
		assert_eq!(journal.meta("genesis").unwrap().as_deref(), Some("0xabc"));
		assert_eq!(entry.image_digest, [0xab; 32]);
	}

	#[test]
	fn a_report_slot_is_signed_once_and_a_different_commitment_is_refused() {
		let dir = tempfile::tempdir().unwrap();
		let journal = Journal::open(&dir.path().join("j.redb")).unwrap();
		journal.put(&LeaseEntry::new(1, [1; 32], spec(), vec![], ExecutorKind::Docker)).unwrap();
		let mut signed = 0;
		let first = journal
			.sign_report_once(1, ReportKind::Final, commitment(0), vec![1], || {
				signed += 1;
				vec![9; 64]
			})
			.unwrap();
		let again = journal
			.sign_report_once(1, ReportKind::Final, commitment(0), vec![1], || {
				signed += 1;
				vec![8; 64]
			})
			.unwrap();
		assert_eq!(first, again);
		assert_eq!(signed, 1);
		let conflict = journal.sign_report_once(
			1,
			ReportKind::Final,
			commitment(1),
			vec![],
			std::vec::Vec::new,
		);
		assert!(matches!(conflict, Err(JournalError::ConflictingReport { lease: 1, .. })));
		// Another slot is another report.
		journal
			.sign_report_once(
				1,
				ReportKind::Checkpoint { sequence: 1 },
				commitment(1),
				vec![],
				|| vec![7; 64],
			)
			.unwrap();
		assert_eq!(journal.get(1).unwrap().unwrap().reports.len(), 2);
	}

	#[test]
	fn a_writer_that_read_before_a_signature_cannot_erase_it() {
		let dir = tempfile::tempdir().unwrap();
		let journal = Journal::open(&dir.path().join("j.redb")).unwrap();
		journal.put(&LeaseEntry::new(1, [1; 32], spec(), vec![], ExecutorKind::Docker)).unwrap();
		// Read (by a supervisor, say), then the report is signed and its extrinsic stored…
		let mut stale = journal.get(1).unwrap().unwrap();
		journal
			.sign_report_once(1, ReportKind::Final, commitment(0), vec![], || vec![9; 64])
			.unwrap();
		let mut entry = journal.get(1).unwrap().unwrap();
		let extrinsic = SignedExtrinsic {
			slot: "result".into(),
			bytes: vec![1, 2],
			hash: vec![3],
			nonce: 4,
			included: true,
			included_ms: None,
			valid_until: None,
			refused: None,
		};
		entry.extrinsics.insert("result".into(), extrinsic.clone());
		journal.put(&entry).unwrap();
		// …then the stale copy is written back, and one with the extrinsic not included.
		stale.phase = Phase::Exited;
		journal.put(&stale).unwrap();
		let mut older = stale.clone();
		older.extrinsics.insert("result".into(), SignedExtrinsic { included: false, ..extrinsic });
		journal.put(&older).unwrap();
		let kept = journal.get(1).unwrap().unwrap();
		assert_eq!(kept.phase, Phase::Exited);
		assert_eq!(kept.reports.len(), 1);
		assert!(kept.extrinsics["result"].included);
		// Only an explicit drop forgets an extrinsic.
		journal.drop_extrinsic(1, "result").unwrap();
		assert!(journal.get(1).unwrap().unwrap().extrinsics.is_empty());
		// A second, different commitment is still refused after all of it.
		let conflict =
			journal.sign_report_once(1, ReportKind::Final, commitment(1), vec![], Vec::new);
		assert!(matches!(conflict, Err(JournalError::ConflictingReport { .. })));
	}

	#[test]
	fn an_entry_that_does_not_decode_stops_no_other() {
		let dir = tempfile::tempdir().unwrap();
		let journal = Journal::open(&dir.path().join("j.redb")).unwrap();
		journal.put(&LeaseEntry::new(1, [1; 32], spec(), vec![], ExecutorKind::Docker)).unwrap();
		let tx = journal.db.begin_write().unwrap();
		tx.open_table(LEASES).unwrap().insert(2, b"not json".as_slice()).unwrap();
		tx.commit().unwrap();
		assert_eq!(journal.all().unwrap().iter().map(|e| e.lease).collect::<Vec<_>>(), [1]);
		assert!(matches!(journal.get(2), Err(JournalError::Corrupt(2, _))));
	}

	#[test]
	fn export_and_import_move_everything() {
		let dir = tempfile::tempdir().unwrap();
		let from = Journal::open(&dir.path().join("a.redb")).unwrap();
		from.put(&LeaseEntry::new(5, [1; 32], spec(), vec![], ExecutorKind::Native)).unwrap();
		from.set_meta("genesis", "0x01").unwrap();
		let json = serde_json::to_string(&from.export().unwrap()).unwrap();
		let to = Journal::open(&dir.path().join("b.redb")).unwrap();
		to.import(&serde_json::from_str(&json).unwrap()).unwrap();
		assert_eq!(to.all().unwrap(), from.all().unwrap());
		assert_eq!(to.meta("genesis").unwrap().as_deref(), Some("0x01"));
		// An export of another chain names other leases by the same ids.
		let other = Journal::open(&dir.path().join("c.redb")).unwrap();
		other.set_meta("genesis", "0x02").unwrap();
		let refused = other.import(&serde_json::from_str(&json).unwrap());
		assert!(matches!(refused, Err(JournalError::OtherChain { .. })));
		assert!(other.all().unwrap().is_empty());
		// A journal that has run jobs here keeps its instance: they carry it.
		let running = Journal::open(&dir.path().join("d.redb")).unwrap();
		let instance = running.instance().unwrap();
		assert_ne!(Some(&instance), from.export().unwrap().meta.get("instance"));
		from.instance().unwrap();
		let json = serde_json::to_string(&from.export().unwrap()).unwrap();
		running.import(&serde_json::from_str(&json).unwrap()).unwrap();
		assert_eq!(running.instance().unwrap(), instance);
		assert_eq!(running.meta("genesis").unwrap().as_deref(), Some("0x01"));
	}
}
