//! The job file a buyer writes (TOML), and its translation into an order: the job spec, the
//! terms and the deposit. Every mistake is reported with the field it is in.
//!
//! One format for every reader: `stint order create` orders it, and `stint-worker run-once`
//! runs exactly the same file's `[job]` table without a chain (its `[gpus]` and `[terms]` are
//! checked the same way, and then only the job is run), so what a provider tries locally is
//! what a buyer orders.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::{
	parse_stint,
	runtime::runtime_types::{
		pallet_market::types::OrderTerms, sp_arithmetic::per_things::Permill as PerMill,
	},
	Static,
};
use stint_primitives::{
	Balance, ComputeCapability, EnvVar, GpuRequirements, Input, JobSpec, Permill,
};

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
	pub job: Job,
	pub gpus: Gpus,
	pub terms: Terms,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
	pub image: String,
	#[serde(default)]
	pub command: Vec<String>,
	#[serde(default)]
	pub env: BTreeMap<String, String>,
	#[serde(default)]
	pub inputs: Vec<InputFile>,
	#[serde(default = "one_gib")]
	pub max_output_bytes: u64,
}

fn one_gib() -> u64 {
	1 << 30
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
	pub uri: String,
	/// blake2-256 of the content, hex (with or without `0x`).
	pub content_hash: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpus {
	pub count: u32,
	#[serde(default)]
	pub min_vram_mib: u32,
	/// `major.minor`, e.g. `9.0`.
	#[serde(default)]
	pub min_compute_capability: Option<String>,
	#[serde(default)]
	pub models: Vec<String>,
	#[serde(default)]
	pub min_cuda_driver_version: u32,
	#[serde(default)]
	pub region: Option<String>,
	#[serde(default)]
	pub min_reputation_percent: u32,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Terms {
	/// STINT, e.g. `"0.5"`.
	pub max_price_per_block: String,
	/// Omit for an open-ended job that runs while its escrow lasts.
	#[serde(default)]
	pub duration_blocks: Option<u32>,
	pub bid_window_blocks: u32,
	#[serde(default = "yes")]
	pub auto_accept: bool,
	/// Omit for the chain's least (`Market.MinTerminationNotice`); an open-ended job's
	/// provider must give this much notice before it leaves.
	#[serde(default)]
	pub termination_notice_blocks: Option<u32>,
	/// Percent of every payment withheld until your verdict on the period it paid for. Omit
	/// for the chain's least (`Market.MinHoldback`, 10 %).
	#[serde(default)]
	pub holdback_percent: Option<u32>,
	/// Blocks you want to judge each result in; omit (or 0) for the chain's verdict window.
	#[serde(default)]
	pub verdict_window_blocks: u32,
	/// The job writes the same outputs for the same inputs on any GPU (fixed seeds, no
	/// timestamps, deterministic kernels): you may then dispute a result, and another provider
	/// re-executes the job to decide. Default false.
	#[serde(default)]
	pub deterministic: bool,
	/// How many providers run the job, each on its own GPUs (default 1, at most the chain's
	/// `Market.MaxReplicas`, 5). Above 1 the job must be `deterministic`, of fixed duration
	/// and auto-accepted: each replica seals its result, reveals it once all have, and the
	/// majority's outputs are paid; a replica that disagrees or does not reveal is slashed.
	/// The deposit covers every replica.
	#[serde(default = "one")]
	pub replicas: u32,
	/// STINT; defaults to `max_price_per_block × duration_blocks` for a fixed duration.
	#[serde(default)]
	pub deposit: Option<String>,
}

fn one() -> u32 {
	1
}

fn yes() -> bool {
	true
}

/// What `create_order` takes.
#[derive(Debug)]
pub struct OrderArgs {
	pub spec: JobSpec,
	pub terms: OrderTerms<Balance, u32>,
	pub deposit: Balance,
	/// The file left the notice out: the chain's least applies (see [`OrderArgs::complete`]).
	pub default_notice: bool,
	/// The file left the holdback out: the chain's least applies.
	pub default_holdback: bool,
}

impl OrderArgs {
	/// Fills what the file left to the chain: the least notice an open-ended order needs and
	/// the least holdback.
	pub fn complete(&mut self, least_notice: u32, least_holdback: Permill) {
		if self.default_notice && self.terms.duration.is_none() {
			self.terms.termination_notice = least_notice;
		}
		if self.default_holdback {
			self.terms.holdback = PerMill(least_holdback.deconstruct());
		}
	}
}

fn bounded<T, const N: u32>(
	items: Vec<T>,
	what: &str,
) -> Result<stint_primitives::BoundedVec<T, stint_primitives::ConstU32<N>>, String> {
	let len = items.len();
	items.try_into().map_err(|_| format!("{what}: {len} is more than the {N} allowed"))
}

fn text<const N: u32>(value: &str, what: &str) -> Result<stint_primitives::Text<N>, String> {
	bounded::<u8, N>(value.as_bytes().to_vec(), &format!("{what} (bytes)"))
}

fn hash32(value: &str, what: &str) -> Result<[u8; 32], String> {
	crate::parse_hex32(value).ok_or_else(|| format!("{what}: `{value}` is not 32 bytes of hex"))
}

/// Parses and checks a job file: what `create_order` takes.
pub fn parse(text_in: &str) -> Result<OrderArgs, String> {
	JobFile::parse(text_in)?.order()
}

impl JobFile {
	/// Reads a job file (TOML); nothing is checked past the format yet.
	pub fn parse(text_in: &str) -> Result<Self, String> {
		toml::from_str(text_in).map_err(|e| e.to_string())
	}

	/// Checks the whole file and translates it into an order.
	pub fn order(&self) -> Result<OrderArgs, String> {
		let spec = self.job.spec()?;
		let requirements = self.gpus.requirements()?;
		self.terms.order(spec, requirements)
	}
}

impl Job {
	/// A job of `image` running `command`, with no environment, no inputs and 1 GiB of
	/// outputs at most (the file's defaults).
	pub fn new(image: impl Into<String>, command: &[&str]) -> Self {
		Self {
			image: image.into(),
			command: command.iter().map(|word| word.to_string()).collect(),
			env: BTreeMap::new(),
			inputs: Vec::new(),
			max_output_bytes: one_gib(),
		}
	}

	/// The job spec an order carries: the image pinned by its digest, the command, the
	/// environment (reserved names refused), the inputs pinned by their hashes.
	pub fn spec(&self) -> Result<JobSpec, String> {
		let job = self;
		if !stint_primitives::is_pinned_image(job.image.as_bytes()) {
			return Err(format!(
				"job.image: `{}` is not pinned by digest (name@sha256:<64 lower-case hex>)",
				job.image
			));
		}
		let command = job
			.command
			.iter()
			.map(|word| text(word, "job.command word"))
			.collect::<Result<Vec<_>, _>>()?;
		let env = job
			.env
			.iter()
			.map(|(k, v)| {
				if !stint_primitives::is_job_env_name(k.as_bytes()) {
					return Err(format!(
						"job.env.{k}: not a name a job may set (STINT_*, NVIDIA_*, LD_*, \
						 CUDA_VISIBLE_DEVICES, PATH and the C library's loader variables are \
						 reserved)"
					));
				}
				Ok(EnvVar {
					key: text(k, "job.env name")?,
					value: text(v, &format!("job.env.{k}"))?,
				})
			})
			.collect::<Result<Vec<_>, String>>()?;
		let inputs = job
			.inputs
			.iter()
			.enumerate()
			.map(|(i, input)| {
				Ok(Input {
					uri: text(&input.uri, &format!("job.inputs[{i}].uri"))?,
					content_hash: hash32(
						&input.content_hash,
						&format!("job.inputs[{i}].content_hash"),
					)?,
				})
			})
			.collect::<Result<Vec<_>, String>>()?;
		Ok(JobSpec {
			image: text(&job.image, "job.image")?,
			command: bounded(command, "job.command")?,
			env: bounded(env, "job.env")?,
			inputs: bounded(inputs, "job.inputs")?,
			max_output_bytes: job.max_output_bytes,
		})
	}
}

impl Gpus {
	/// The GPU requirements an order carries.
	pub fn requirements(&self) -> Result<GpuRequirements, String> {
		let gpus = self;
		let min_compute_capability = match &gpus.min_compute_capability {
			None => ComputeCapability::default(),
			Some(cc) => {
				let (major, minor) = cc.split_once('.').unwrap_or((cc, "0"));
				ComputeCapability {
					major: major
						.parse()
						.map_err(|_| format!("gpus.min_compute_capability: `{cc}`"))?,
					minor: minor
						.parse()
						.map_err(|_| format!("gpus.min_compute_capability: `{cc}`"))?,
				}
			}
		};
		let region = match &gpus.region {
			None => None,
			Some(r) => {
				let code: [u8; 2] = r
					.as_bytes()
					.try_into()
					.ok()
					.filter(stint_primitives::is_valid_region)
					.ok_or_else(|| {
						format!("gpus.region: `{r}` is not a two-letter upper-case code")
					})?;
				Some(code)
			}
		};
		if gpus.min_reputation_percent > 100 {
			return Err("gpus.min_reputation_percent: at most 100".into());
		}
		let models = gpus
			.models
			.iter()
			.map(|m| text(m, "gpus.models entry"))
			.collect::<Result<Vec<_>, _>>()?;
		Ok(GpuRequirements {
			gpu_count: gpus.count,
			min_vram_mib: gpus.min_vram_mib,
			min_compute_capability,
			models: bounded(models, "gpus.models")?,
			min_cuda_driver_version: gpus.min_cuda_driver_version,
			region,
			min_reputation: Permill::from_percent(gpus.min_reputation_percent),
		})
	}
}

impl Terms {
	/// The order's terms and deposit, with `spec` and `requirements`.
	pub fn order(&self, spec: JobSpec, requirements: GpuRequirements) -> Result<OrderArgs, String> {
		let terms = self;
		let price = parse_stint(&terms.max_price_per_block)
			.map_err(|e| format!("terms.max_price_per_block: {e}"))?;
		let deposit = match (&terms.deposit, terms.duration_blocks) {
			(Some(d), _) => parse_stint(d).map_err(|e| format!("terms.deposit: {e}"))?,
			(None, Some(blocks)) => {
				price.saturating_mul(blocks.into()).saturating_mul(terms.replicas.max(1).into())
			}
			(None, None) => {
				return Err(
					"terms.deposit: an open-ended job (no duration_blocks) needs a deposit".into()
				)
			}
		};
		let holdback = match terms.holdback_percent {
			Some(percent) if percent > 100 => {
				return Err(format!("terms.holdback_percent: {percent} is more than 100"))
			}
			Some(percent) => Permill::from_percent(percent),
			None => Permill::zero(),
		};
		Ok(OrderArgs {
			spec,
			terms: OrderTerms {
				requirements: Static(requirements),
				max_price_per_block: price,
				duration: terms.duration_blocks,
				bid_window: terms.bid_window_blocks,
				auto_accept: terms.auto_accept,
				replicas: terms.replicas,
				termination_notice: terms.termination_notice_blocks.unwrap_or(0),
				holdback: PerMill(holdback.deconstruct()),
				verdict_window: terms.verdict_window_blocks,
				deterministic: terms.deterministic,
			},
			deposit,
			default_notice: terms.termination_notice_blocks.is_none(),
			default_holdback: terms.holdback_percent.is_none(),
		})
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	const GOOD: &str = r#"
[job]
image = "ghcr.io/acme/train@sha256:5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592"
command = ["python", "train.py"]
env = { EPOCHS = "3" }
inputs = [{ uri = "https://data.example/set.tar", content_hash = "0x0101010101010101010101010101010101010101010101010101010101010101" }]

[gpus]
count = 1
min_vram_mib = 80000
min_compute_capability = "9.0"
region = "DE"

[terms]
max_price_per_block = "0.5"
duration_blocks = 600
bid_window_blocks = 10
"#;

	#[test]
	fn a_good_file_becomes_an_order() {
		let order = parse(GOOD).unwrap();
		assert_eq!(order.deposit, 300 * stint_primitives::STINT);
		assert_eq!(order.terms.duration, Some(600));
		assert!(order.terms.auto_accept);
		assert_eq!(order.spec.command.len(), 2);
		assert_eq!(order.terms.requirements.0.region, Some(*b"DE"));
	}

	#[test]
	fn a_replicated_order_escrows_every_replica() {
		let replicated =
			GOOD.replace("bid_window_blocks = 10", "bid_window_blocks = 10\nreplicas = 3");
		let order = parse(&replicated).unwrap();
		assert_eq!(order.terms.replicas, 3);
		assert_eq!(order.deposit, 900 * stint_primitives::STINT);
		assert_eq!(parse(GOOD).unwrap().terms.replicas, 1);
	}

	#[test]
	fn mistakes_name_their_field() {
		let unpinned = GOOD.replace(
			"@sha256:5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592",
			":latest",
		);
		assert!(parse(&unpinned).unwrap_err().starts_with("job.image"));
		assert!(parse(&GOOD.replace("\"0.5\"", "\"half\""))
			.unwrap_err()
			.starts_with("terms.max_price_per_block"));
		assert!(parse(&GOOD.replace("\"DE\"", "\"de\"")).unwrap_err().starts_with("gpus.region"));
		assert!(parse(&GOOD.replace("0x0101", "0x01")).unwrap_err().contains("content_hash"));
		assert!(parse(&GOOD.replace("duration_blocks = 600\n", ""))
			.unwrap_err()
			.starts_with("terms.deposit"));
		assert!(parse(&GOOD.replace("[gpus]", "[gpu]")).is_err());
		let preloads = GOOD.replace("EPOCHS = \"3\"", "LD_PRELOAD = \"/x.so\"");
		assert!(parse(&preloads).unwrap_err().starts_with("job.env.LD_PRELOAD"));
		assert!(parse("not toml").is_err());
	}
}
