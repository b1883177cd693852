//! Pulling a job's image: never from a loopback or private registry (checked by the caller),
//! and held to a size on the way ([`PullRules`]).

use std::{collections::HashMap, path::Path, time::Duration};

use bollard::{
	errors::Error as DockerError,
	query_parameters::{CreateImageOptionsBuilder, RemoveImageOptionsBuilder},
};
use futures::StreamExt;
use stint_primitives::ReservedExit;

use super::PrepareError;

/// What the engine may pull for a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PullRules {
	/// The most bytes an image may take: its layers as the engine downloads them, and what it
	/// unpacks to on the engine's disk (`[limits] max_image_mib`).
	pub max_image_bytes: u64,
	/// Whether an image may come from a loopback or private registry. Never for a worker: a
	/// pull is a request to the provider's own network that a buyer chose, and the engine
	/// pulls from loopback over plain HTTP. Only tests that serve an image there set it.
	pub private_registries: bool,
}

/// The default of `[limits] max_image_mib`: 40 GiB, room for the largest CUDA images in use.
pub const DEFAULT_MAX_IMAGE_MIB: u64 = 40 << 10;

impl Default for PullRules {
	fn default() -> Self {
		Self { max_image_bytes: DEFAULT_MAX_IMAGE_MIB << 20, private_registries: false }
	}
}

/// Whether a failed pull is this machine's doing (its disk full, its engine's connection gone),
/// not the image's: then the lease is not acknowledged, as for any fault of the provider.
fn pull_failed_here(error: &DockerError) -> bool {
	match error {
		DockerError::DockerResponseServerError { message, .. }
		| DockerError::DockerStreamError { error: message } => {
			message.contains("no space left on device")
		}
		// Not the registry's answer: the engine's connection or its reply.
		_ => true,
	}
}

/// Pulls `reference`, held to [`PullRules::max_image_bytes`] on the way: the sizes of its
/// layers as the engine starts downloading them (read from the image's manifest), and the
/// room it takes on the engine's disk as it unpacks (where this process sees that disk),
/// looked at every 100 ms once its manifest is read. Past either, the pull is cancelled
/// (the request dropped) and the image is the order's fault: a gzip bomb is the buyer's
/// choice. Other writes to that disk during the pull count against the image too (a limit far
/// above what the machine's other writers do in a pull's time keeps that from mattering).
pub(super) async fn pull(
	engine: &bollard::Docker,
	reference: &str,
	rules: PullRules,
) -> Result<(), PrepareError> {
	let max = rules.max_image_bytes;
	let too_large = |why: String| PrepareError::Order(ReservedExit::ImageTooLarge, why);
	let root = engine.info().await.ok().and_then(|info| info.docker_root_dir);
	let free = || root.as_deref().and_then(|r| stint_probe::free_bytes(Path::new(r)).ok());
	// Counted from the first word about a layer: before it (the manifest not read yet), what
	// the disk loses is not the image's.
	let mut before = None;
	let options = CreateImageOptionsBuilder::default().from_image(reference).build();
	let mut pull = engine.create_image(Some(options), None, None);
	let mut layers: HashMap<String, u64> = HashMap::new();
	let mut look = tokio::time::interval(Duration::from_millis(100));
	loop {
		tokio::select! {
			step = pull.next() => match step {
				None => return Ok(()),
				Some(Err(error)) => {
					let why = format!("{reference} is not here and cannot be pulled: {error}");
					return Err(match pull_failed_here(&error) {
						true => PrepareError::Provider(why),
						false => PrepareError::Order(ReservedExit::ImageUnavailable, why),
					});
				}
				Some(Ok(step)) => {
					// A layer's first word (`Pulling fs layer`): the manifest is read.
					if step.id.is_some() {
						before = before.or_else(free);
					}
					let total = step.progress_detail.and_then(|detail| detail.total);
					if let (Some("Downloading"), Some(layer), Some(total)) =
						(step.status.as_deref(), step.id, total)
					{
						layers.insert(layer, total.max(0) as u64);
					}
					let bytes: u64 = layers.values().sum();
					if bytes > max {
						drop(pull);
						leave_nothing(engine, reference).await;
						return Err(too_large(format!(
							"{reference}: its layers are {bytes} bytes or more, more than the \
							 {max} this provider pulls"
						)));
					}
				}
			},
			_ = look.tick() => {
				let used = before.zip(free()).map_or(0, |(before, now)| before.saturating_sub(now));
				if used > max {
					drop(pull);
					leave_nothing(engine, reference).await;
					return Err(too_large(format!(
						"{reference} took more than {max} bytes of the engine's disk as it \
						 unpacked: pull cancelled"
					)));
				}
			}
		}
	}
}

/// After a pull is cancelled the engine may still register what it had unpacked, a moment
/// later (seen when the pull was cancelled before its layers came): that image is removed once
/// it appears (looked for during five seconds).
async fn leave_nothing(engine: &bollard::Docker, reference: &str) {
	for _ in 0..25 {
		tokio::time::sleep(Duration::from_millis(200)).await;
		if engine.inspect_image(reference).await.is_err() {
			continue;
		}
		let options = RemoveImageOptionsBuilder::default().build();
		if engine.remove_image(reference, Some(options), None).await.is_ok() {
			let why = "the engine finished a cancelled pull: its image is removed";
			crate::log::warn("executor", None, format!("{reference}: {why}"));
			return;
		}
	}
}

/// What the image `id` just pulled as `reference` unpacked to, if within the rules, whatever
/// the pull showed on the way; one that is not is removed, and is the order's fault.
pub(super) async fn unpacked_within(
	engine: &bollard::Docker,
	id: &str,
	reference: &str,
	rules: PullRules,
) -> Result<u64, PrepareError> {
	let max = rules.max_image_bytes;
	let size = engine.inspect_image(id).await.ok().and_then(|image| image.size);
	let size = size.unwrap_or_default().max(0) as u64;
	if size <= max {
		return Ok(size);
	}
	let options = RemoveImageOptionsBuilder::default().build();
	if let Err(error) = engine.remove_image(id, Some(options), None).await {
		return Err(PrepareError::Provider(format!(
			"{reference} unpacked to {size} bytes, more than the {max} allowed, and cannot be \
			 removed: {error}"
		)));
	}
	Err(PrepareError::Order(
		ReservedExit::ImageTooLarge,
		format!("{reference} unpacked to {size} bytes, more than the {max} this provider pulls: removed"),
	))
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn a_pull_that_fails_for_want_of_disk_or_engine_is_the_providers_fault() {
		let disk = DockerError::DockerStreamError {
			error: "failed to register layer: write /x: no space left on device".into(),
		};
		assert!(pull_failed_here(&disk));
		assert!(pull_failed_here(&DockerError::RequestTimeoutError));
		let unknown = DockerError::DockerResponseServerError {
			status_code: 404,
			message: "manifest for x@sha256:00 not found: manifest unknown".into(),
		};
		assert!(!pull_failed_here(&unknown));
	}
}
