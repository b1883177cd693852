//! Images the worker pulled for jobs, kept on record in its journal and pruned by age and total
//! size: an image a buyer chose does not stay on the provider's disk for good, and the images
//! of live leases are never touched. Images the provider built or pulled itself are never on
//! record, so never pruned.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::journal::{Journal, JournalError};

/// One pulled image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pulled {
	/// What it takes on the engine's disk.
	pub bytes: u64,
	/// When a lease last used it (Unix seconds).
	pub last_used: u64,
}

/// The pulled images by ID.
pub type Record = BTreeMap<String, Pulled>;

const KEY: &str = "pulled_images";

/// The record in `journal` (empty if none yet, or unreadable: then nothing is pruned that a
/// later record would not name again).
pub fn load(journal: &Journal) -> Result<Record, JournalError> {
	Ok(journal.meta(KEY)?.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default())
}

pub fn save(journal: &Journal, record: &Record) -> Result<(), JournalError> {
	journal.set_meta(KEY, &serde_json::to_string(record).expect("plain data"))
}

/// An image used this recently is never pruned for room: a lease that just resolved it may not
/// have it on record as in use yet.
pub const RECENT_SECS: u64 = 600;

/// Which images of `record` to remove at `now`: never one `in_use` (a live lease's); every
/// other one unused for `keep_secs`; then, while those left take more than `max_bytes`, the
/// least recently used first, except those used in the last [`RECENT_SECS`].
pub fn to_prune(
	record: &Record,
	in_use: &HashSet<String>,
	now: u64,
	keep_secs: u64,
	max_bytes: u64,
) -> Vec<String> {
	let mut kept: Vec<(&String, &Pulled)> = Vec::new();
	let mut prune = Vec::new();
	for (id, pulled) in record {
		if in_use.contains(id) {
			continue;
		}
		match now.saturating_sub(pulled.last_used) >= keep_secs {
			true => prune.push(id.clone()),
			false => kept.push((id, pulled)),
		}
	}
	let mut total: u64 =
		record.iter().filter(|(id, _)| !prune.contains(id)).map(|(_, pulled)| pulled.bytes).sum();
	kept.sort_by_key(|(id, pulled)| (pulled.last_used, id.to_string()));
	for (id, pulled) in kept {
		if total <= max_bytes || now.saturating_sub(pulled.last_used) < RECENT_SECS {
			break;
		}
		total = total.saturating_sub(pulled.bytes);
		prune.push(id.clone());
	}
	prune
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn old_images_go_then_the_least_recently_used_until_the_rest_fits() {
		let record: Record = [
			("old", 10, 0),
			("live", 500, 0),
			("a", 100, 8_000),
			("b", 100, 9_000),
			("c", 100, 9_990),
		]
		.map(|(id, bytes, last_used)| (id.to_string(), Pulled { bytes, last_used }))
		.into();
		let in_use: HashSet<String> = ["live".to_string()].into();
		let now = 10_000;
		// Kept 5,000 s: only the old one goes (the live one is as old, and kept).
		assert_eq!(to_prune(&record, &in_use, now, 5_000, u64::MAX), ["old"]);
		// At most 700 bytes: the live one's 500 leave room for two more, the oldest goes.
		assert_eq!(to_prune(&record, &in_use, now, 5_000, 700), ["old", "a"]);
		// At most 100: every other one, but never the live one nor one just used.
		assert_eq!(to_prune(&record, &in_use, now, 5_000, 100), ["old", "a", "b"]);
		// Nothing past its time and room enough: nothing.
		assert!(to_prune(&record, &in_use, now, 50_000, 10_000).is_empty());
	}
}
