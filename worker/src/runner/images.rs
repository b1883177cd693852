//! The images the executor pulled for leases: put on record as they are pulled and used, and
//! pruned at each settlement beat ([`crate::images`]).

use super::*;
use crate::images::{self, Pulled};

impl<E: Executor> Worker<E> {
	/// Puts what the executor pulled on record, and `image_id` as used now (if on record).
	pub(super) fn note_image_use(&self, image_id: &str) {
		let pulled = self.executor.take_pulled();
		let Ok(mut record) = images::load(&self.journal) else { return };
		let known = record.contains_key(image_id);
		if pulled.is_empty() && !known {
			return;
		}
		let now = crate::unix_now();
		for (id, bytes) in pulled {
			record.insert(id, Pulled { bytes, last_used: now });
		}
		if let Some(used) = record.get_mut(image_id) {
			used.last_used = now;
		}
		if let Err(why) = images::save(&self.journal, &record) {
			log::warn("executor", None, format!("the record of pulled images: {why}"));
		}
	}

	/// Removes the pulled images no live lease uses that `[limits]` says to: unused for
	/// `image_keep_hours`, then the least recently used while they take more than
	/// `images_max_mib`. One the engine still needs (a kept job's container) stays on record
	/// for the next beat.
	pub(super) async fn prune_images(&self) {
		let Ok(record) = images::load(&self.journal) else { return };
		if record.is_empty() {
			return;
		}
		let Ok(entries) = self.journal.all() else { return };
		let in_use: HashSet<String> = entries
			.into_iter()
			.filter(|entry| entry.phase != Phase::Done)
			.filter_map(|entry| entry.image_id)
			.collect();
		let limits = &self.config.limits;
		let prune = images::to_prune(
			&record,
			&in_use,
			crate::unix_now(),
			limits.image_keep_hours.saturating_mul(3600),
			limits.images_max_mib.saturating_mul(1 << 20),
		);
		let mut removed = Vec::new();
		for id in prune {
			match self.executor.remove_image(&id).await {
				Ok(()) => {
					let bytes = record.get(&id).map_or(0, |pulled| pulled.bytes);
					log::info(
						"executor",
						None,
						format!("pruned the pulled image {id} ({bytes} bytes)"),
					);
					removed.push(id);
				}
				Err(why) => {
					log::info("executor", None, format!("the pulled image {id} stays: {why}"))
				}
			}
		}
		if removed.is_empty() {
			return;
		}
		// Read again: a lease may have pulled or used one meanwhile.
		let Ok(mut record) = images::load(&self.journal) else { return };
		for id in removed {
			record.remove(&id);
		}
		if let Err(why) = images::save(&self.journal, &record) {
			log::warn("executor", None, format!("the record of pulled images: {why}"));
		}
	}
}
