//! `worker.toml`: where the chain is, which key signs, where jobs run and what to bid on.
//!
//! ```toml
//! [chain]
//! urls = ["ws://127.0.0.1:9944"]       # tried in turn; the first that answers is used
//!
//! [worker]
//! key = "//Eve//stash"                  # secret URI or key file: the machine's worker key
//! data_dir = "/var/lib/stint-worker"    # journal, per lease its inputs, outputs and logs
//!                                       # (relative: from this file's folder)
//! gpus = "auto"                          # "off": no GPU passthrough (dev and local chains only)
//! executor = "docker"                    # or "native" (programs named below, unisolated)
//! retention_days = 7                     # outputs are served this long after a lease ends
//!
//! [api]
//! listen = "127.0.0.1:8600"             # the outputs API (the endpoint the provider registered)
//!
//! [metrics]
//! listen = "127.0.0.1:9616"             # Prometheus
//!
//! [bidding]
//! enabled = true                         # false: no new bids; standing ones are retracted
//! floor = "0.001"                        # STINT per GPU per block, never below
//! price = "0.01"                         # STINT per GPU per block, unless the model has its own
//! prices = { "NVIDIA H200" = "0.02" }
//! max_leases = 4                         # live leases plus standing bids (a bid gives way)
//! max_bid_blocks = 1200                  # no bid that could stand longer (window + accept)
//! max_duration = 100000                  # blocks; longer fixed orders are not bid on
//! open_ended = true                      # bid on orders without a fixed duration
//! registries = ["docker.io", "ghcr.io"]  # allowed image registries (unset: DEFAULT_REGISTRIES;
//!                                        # []: any public one; never loopback nor private)
//! settle_every = 100                     # blocks between settlements of each live stream
//! ```

use std::{
	collections::BTreeMap,
	net::SocketAddr,
	path::{Path, PathBuf},
};

use serde::Deserialize;
use stint_primitives::Balance;

/// The whole configuration.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
	pub chain: ChainConfig,
	pub worker: WorkerConfig,
	#[serde(default)]
	pub api: ApiConfig,
	#[serde(default)]
	pub metrics: MetricsConfig,
	#[serde(default)]
	pub bidding: BiddingConfig,
	#[serde(default)]
	pub limits: Limits,
	#[serde(default)]
	pub native: NativeConfig,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainConfig {
	pub urls: Vec<String>,
	/// Seconds without a new finalized block before the connection counts as half-open.
	#[serde(default = "default_stall")]
	pub stall_secs: u64,
	/// Failed reconnections in a row before the worker exits for its supervisor to restart it.
	#[serde(default = "default_failures")]
	pub max_failures: u32,
}

fn default_stall() -> u64 {
	60
}
fn default_failures() -> u32 {
	3
}

/// Whether the leased GPUs are passed to jobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuMode {
	/// The GPUs the probe sees; leases on others are not run.
	#[default]
	Auto,
	/// No GPU passthrough: jobs run on the CPU. Only on development and local chains.
	Off,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorChoice {
	#[default]
	Docker,
	Native,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerConfig {
	/// The worker key: a secret URI or a file holding one.
	pub key: String,
	pub data_dir: PathBuf,
	#[serde(default)]
	pub gpus: GpuMode,
	#[serde(default)]
	pub executor: ExecutorChoice,
	#[serde(default = "default_retention")]
	pub retention_days: u64,
	/// Fetch inputs from loopback and private addresses (a buyer could otherwise make the worker
	/// read services on the provider's own network). For tests and trusted networks only.
	#[serde(default)]
	pub allow_private_inputs: bool,
}

fn default_retention() -> u64 {
	7
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiConfig {
	#[serde(default = "default_api")]
	pub listen: SocketAddr,
}

impl Default for ApiConfig {
	fn default() -> Self {
		Self { listen: default_api() }
	}
}

fn default_api() -> SocketAddr {
	"127.0.0.1:8600".parse().expect("a valid address")
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
	#[serde(default = "default_metrics")]
	pub listen: SocketAddr,
}

impl Default for MetricsConfig {
	fn default() -> Self {
		Self { listen: default_metrics() }
	}
}

fn default_metrics() -> SocketAddr {
	"127.0.0.1:9616".parse().expect("a valid address")
}

/// Prices are written in STINT (`"0.01"`); `u` suffix for plain units.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BiddingConfig {
	#[serde(default = "yes")]
	pub enabled: bool,
	#[serde(default = "default_floor", deserialize_with = "stint")]
	pub floor: Balance,
	#[serde(default = "default_price", deserialize_with = "stint")]
	pub price: Balance,
	#[serde(default, deserialize_with = "stint_map")]
	pub prices: BTreeMap<String, Balance>,
	#[serde(default = "default_max_leases")]
	pub max_leases: u32,
	#[serde(default = "default_max_duration")]
	pub max_duration: u32,
	#[serde(default = "yes")]
	pub open_ended: bool,
	/// The registries whose images are bid on (`docker.io` for a name without one). Unset:
	/// [`DEFAULT_REGISTRIES`]; `[]`: any. A loopback or private one never is, listed or not
	/// (`executor::private_registry`).
	#[serde(default = "default_registries")]
	pub registries: Vec<String>,
	#[serde(default = "default_settle_every")]
	pub settle_every: u32,
	/// Seconds the executor may stay silent before standing bids are retracted (new bids stop
	/// at once): a retraction late in a bid window forfeits the bid's deposit.
	#[serde(default = "default_retract_after_secs")]
	pub retract_after_secs: u64,
	/// Orders of a buyer whose objections slashed providers more than
	/// `buyer_objection_grace` times and in more than this percent of its verdicts get no bid.
	#[serde(default = "default_buyer_objection_percent")]
	pub buyer_objection_percent: u32,
	#[serde(default = "default_buyer_objection_grace")]
	pub buyer_objection_grace: u32,
	/// The longest verdict window (blocks) an order may ask: the collateral stays locked that
	/// long after each result.
	#[serde(default = "default_max_verdict_window")]
	pub max_verdict_window: u32,
	/// The longest a bid may stand (blocks) before it wins or is released: the rest of the
	/// order's bid window, plus the buyer's time to accept if it accepts by hand. An order that
	/// would hold the devices longer gets no bid.
	#[serde(default = "default_max_bid_blocks")]
	pub max_bid_blocks: u32,
}

impl Default for BiddingConfig {
	fn default() -> Self {
		Self {
			enabled: true,
			floor: default_floor(),
			price: default_price(),
			prices: BTreeMap::new(),
			max_leases: default_max_leases(),
			max_duration: default_max_duration(),
			open_ended: true,
			registries: default_registries(),
			settle_every: default_settle_every(),
			retract_after_secs: default_retract_after_secs(),
			buyer_objection_percent: default_buyer_objection_percent(),
			buyer_objection_grace: default_buyer_objection_grace(),
			max_verdict_window: default_max_verdict_window(),
			max_bid_blocks: default_max_bid_blocks(),
		}
	}
}

fn yes() -> bool {
	true
}
fn default_floor() -> Balance {
	stint_primitives::MILLI_STINT
}
fn default_price() -> Balance {
	10 * stint_primitives::MILLI_STINT
}
fn default_max_bid_blocks() -> u32 {
	// Two hours: an hour of bid window and the hour a buyer has to accept by hand.
	1_200
}
fn default_max_verdict_window() -> u32 {
	// A day.
	14_400
}
fn default_buyer_objection_percent() -> u32 {
	20
}
fn default_buyer_objection_grace() -> u32 {
	2
}
fn default_max_leases() -> u32 {
	4
}
fn default_max_duration() -> u32 {
	100_000
}
fn default_settle_every() -> u32 {
	100
}
fn default_retract_after_secs() -> u64 {
	30
}

fn stint<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Balance, D::Error> {
	let text = String::deserialize(d)?;
	stint_client::parse_stint(&text).map_err(serde::de::Error::custom)
}

fn stint_map<'de, D: serde::Deserializer<'de>>(
	d: D,
) -> Result<BTreeMap<String, Balance>, D::Error> {
	BTreeMap::<String, String>::deserialize(d)?
		.into_iter()
		.map(|(model, text)| {
			stint_client::parse_stint(&text)
				.map(|price| (model, price))
				.map_err(serde::de::Error::custom)
		})
		.collect()
}

/// The public registries bid on unless `[bidding] registries` says otherwise.
pub const DEFAULT_REGISTRIES: [&str; 7] = [
	"docker.io",
	"ghcr.io",
	"quay.io",
	"nvcr.io",
	"registry.k8s.io",
	"public.ecr.aws",
	"mcr.microsoft.com",
];

fn default_registries() -> Vec<String> {
	DEFAULT_REGISTRIES.map(String::from).to_vec()
}

/// What one job may use of the host.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
	/// The most processes in a job.
	#[serde(default = "default_pids")]
	pub pids: i64,
	/// Seconds between SIGTERM and SIGKILL when a job is stopped.
	#[serde(default = "default_grace")]
	pub stop_grace_secs: u32,
	/// The most bytes of each log (stdout, stderr) kept.
	#[serde(default = "default_log_bytes")]
	pub log_bytes: u64,
	/// `/tmp` in the job, in MiB.
	#[serde(default = "default_tmp")]
	pub tmp_mib: u64,
	/// Each lease's outputs in a filesystem of their own, the order's size: the kernel holds a
	/// job to its limit (see `quota`). Where the worker cannot (not root, no `mkfs.ext4`), the
	/// walk of the outputs alone, said at start. `false`: the walk alone.
	#[serde(default = "default_true")]
	pub outputs_filesystem: bool,
	/// The user a Docker job runs as, `uid:gid`: a fixed unprivileged one whatever its image
	/// says (an image's `USER root` would otherwise run the job as root, which leaves set-id
	/// files and folders closed to the worker in the outputs). Never root. `""`: the image's
	/// own user.
	#[serde(default = "default_job_user")]
	pub job_user: String,
	/// The most an image pulled for a job may take, in MiB: its layers as downloaded, and what
	/// it unpacks to. Larger: the order's fault (`ImageTooLarge`), the pull cancelled.
	#[serde(default = "default_max_image_mib")]
	pub max_image_mib: u64,
	/// Images the worker pulled for jobs and no live lease uses are removed after this many
	/// hours unused...
	#[serde(default = "default_image_keep_hours")]
	pub image_keep_hours: u64,
	/// ... and, least recently used first, while together they take more than this (MiB).
	#[serde(default = "default_images_max_mib")]
	pub images_max_mib: u64,
}

fn default_image_keep_hours() -> u64 {
	24
}

fn default_images_max_mib() -> u64 {
	100 << 10
}

fn default_max_image_mib() -> u64 {
	crate::executor::docker::DEFAULT_MAX_IMAGE_MIB
}

impl Limits {
	/// What the Docker engine may pull for a job under these limits.
	pub fn pull_rules(&self) -> crate::executor::docker::PullRules {
		crate::executor::docker::PullRules {
			max_image_bytes: self.max_image_mib.saturating_mul(1 << 20),
			..Default::default()
		}
	}
}

/// `nobody`.
pub const DEFAULT_JOB_USER: &str = "65534:65534";

fn default_job_user() -> String {
	DEFAULT_JOB_USER.into()
}

/// Whether `user` is a `uid:gid` (or a `uid`) of numbers, neither of them root's.
pub fn valid_job_user(user: &str) -> bool {
	let number = |part: &str| {
		!part.is_empty() && part.bytes().all(|c| c.is_ascii_digit()) && part.parse::<u32>().is_ok()
	};
	let not_root = |part: &str| part.parse::<u32>().is_ok_and(|id| id != 0);
	match user.split_once(':') {
		Some((uid, gid)) => number(uid) && number(gid) && not_root(uid) && not_root(gid),
		None => number(user) && not_root(user),
	}
}

impl Default for Limits {
	fn default() -> Self {
		Self {
			pids: default_pids(),
			stop_grace_secs: default_grace(),
			log_bytes: default_log_bytes(),
			tmp_mib: default_tmp(),
			outputs_filesystem: true,
			job_user: default_job_user(),
			max_image_mib: default_max_image_mib(),
			image_keep_hours: default_image_keep_hours(),
			images_max_mib: default_images_max_mib(),
		}
	}
}

fn default_true() -> bool {
	true
}

fn default_pids() -> i64 {
	512
}
fn default_grace() -> u32 {
	10
}
fn default_log_bytes() -> u64 {
	16 << 20
}
fn default_tmp() -> u64 {
	1024
}

/// Programs the native executor may run: an order's image `native/<name>@sha256:<digest>` runs
/// the program `name` when the file's sha256 is that digest.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NativeConfig {
	#[serde(default)]
	pub programs: Vec<NativeProgram>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NativeProgram {
	pub name: String,
	pub path: PathBuf,
	/// 64 hex digits.
	pub sha256: String,
	/// Its arguments, fixed by the provider: an order names the program and brings inputs,
	/// never arguments nor variables (a program that interprets its arguments, python or
	/// torchrun, would otherwise run whatever a buyer wrote).
	#[serde(default)]
	pub args: Vec<String>,
}

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
	#[error("cannot read {0}: {1}")]
	Read(PathBuf, std::io::Error),
	#[error("{0}: {1}")]
	Parse(PathBuf, String),
	#[error("{0}: {1}")]
	Invalid(PathBuf, String),
}

impl Config {
	/// Reads and checks `path`.
	pub fn load(path: &Path) -> Result<Self, ConfigError> {
		let text =
			std::fs::read_to_string(path).map_err(|e| ConfigError::Read(path.to_path_buf(), e))?;
		let mut config =
			Self::parse(&text).map_err(|why| ConfigError::Parse(path.to_path_buf(), why))?;
		// A relative data directory is the config file's neighbour, wherever it is started from,
		// and absolute (the jobs' folders are bound and run by absolute paths).
		if config.worker.data_dir.is_relative() {
			let invalid = |why: String| ConfigError::Invalid(path.to_path_buf(), why);
			let file = std::path::absolute(path).map_err(|e| invalid(e.to_string()))?;
			let folder = file.parent().unwrap_or(Path::new("/"));
			let beside = folder.join(&config.worker.data_dir);
			// Never a fresh journal in place of one found where the working directory put it.
			let cwd =
				std::path::absolute(&config.worker.data_dir).map_err(|e| invalid(e.to_string()))?;
			if cwd != beside
				&& cwd.join("journal.redb").exists()
				&& !beside.join("journal.redb").exists()
			{
				return Err(invalid(format!(
					"[worker] data_dir {:?} is read beside this file ({}), but its journal is at \
					 {}: write the data directory as an absolute path",
					config.worker.data_dir,
					beside.display(),
					cwd.display()
				)));
			}
			config.worker.data_dir = beside;
		}
		Ok(config)
	}

	/// Parses and checks a configuration's text.
	pub fn parse(text: &str) -> Result<Self, String> {
		let config: Config = toml::from_str(text).map_err(|e| e.to_string())?;
		if config.chain.urls.is_empty() {
			return Err("[chain] urls: give at least one node URL".into());
		}
		if config.bidding.floor > config.bidding.price {
			return Err("[bidding] price is below floor".into());
		}
		if let Some((model, _)) =
			config.bidding.prices.iter().find(|(_, price)| **price < config.bidding.floor)
		{
			return Err(format!("[bidding] the price of {model} is below floor"));
		}
		if !config.limits.job_user.is_empty() && !valid_job_user(&config.limits.job_user) {
			return Err(format!(
				"[limits] job_user {:?}: give uid:gid as numbers, not root's (or \"\" for the \
				 image's own user)",
				config.limits.job_user
			));
		}
		for (n, program) in config.native.programs.iter().enumerate() {
			if stint_client::parse_hex32(&program.sha256).is_none() {
				return Err(format!("[native] {}: sha256 is not 64 hex digits", program.name));
			}
			if config.native.programs[..n].iter().any(|other| other.name == program.name) {
				return Err(format!("[native] {}: named twice", program.name));
			}
		}
		Ok(config)
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	const MINIMAL: &str = r#"
		[chain]
		urls = ["ws://127.0.0.1:9944"]
		[worker]
		key = "//Eve//stash"
		data_dir = "/tmp/w"
	"#;

	#[test]
	fn a_minimal_file_takes_the_documented_defaults() {
		let config = Config::parse(MINIMAL).unwrap();
		assert_eq!(config.worker.gpus, GpuMode::Auto);
		assert_eq!(config.worker.executor, ExecutorChoice::Docker);
		assert_eq!(config.api.listen.to_string(), "127.0.0.1:8600");
		assert_eq!(config.chain.stall_secs, 60);
		assert_eq!(config.chain.max_failures, 3);
		assert_eq!(config.bidding.price, 10 * stint_primitives::MILLI_STINT);
		assert!(config.bidding.enabled && config.bidding.open_ended);
		assert!(!config.worker.allow_private_inputs);
		assert_eq!(config.limits.job_user, "65534:65534");
		assert!(config.bidding.registries.iter().any(|r| r == "docker.io"));
		assert!(config.bidding.registries.iter().all(|r| r.contains('.')));
	}

	#[test]
	fn a_relative_data_directory_is_the_config_files_neighbour() {
		let dir = tempfile::tempdir().unwrap();
		let path = dir.path().join("worker.toml");
		std::fs::write(&path, MINIMAL.replace("\"/tmp/w\"", "\"data\"")).unwrap();
		assert_eq!(Config::load(&path).unwrap().worker.data_dir, dir.path().join("data"));
		// Named relative to the working directory: still the file's neighbour, made absolute.
		let cwd = std::env::current_dir().unwrap();
		let up: PathBuf = cwd.components().skip(1).map(|_| "..").collect();
		let relative = up.join(path.strip_prefix("/").unwrap());
		let loaded = Config::load(&relative).unwrap().worker.data_dir;
		assert!(loaded.is_absolute(), "{}", loaded.display());
		assert_eq!(loaded, std::path::absolute(&relative).unwrap().parent().unwrap().join("data"));
		std::fs::write(&path, MINIMAL).unwrap();
		assert_eq!(Config::load(&path).unwrap().worker.data_dir, Path::new("/tmp/w"));
	}

	#[test]
	fn mistakes_are_named() {
		let unknown = format!("{MINIMAL}\n[bidding]\nprise = \"1\"\n");
		assert!(Config::parse(&unknown).unwrap_err().contains("prise"));
		let below = format!("{MINIMAL}\n[bidding]\nfloor = \"1\"\nprice = \"0.5\"\n");
		assert!(Config::parse(&below).unwrap_err().contains("below floor"));
		let model = format!("{MINIMAL}\n[bidding]\nprices = {{ \"H100\" = \"0.0001\" }}\n");
		assert!(Config::parse(&model).unwrap_err().contains("H100"));
		let gpus = MINIMAL.replace("data_dir", "gpus = \"some\"\ndata_dir");
		assert!(Config::parse(&gpus).is_err());
		for user in ["0:0", "root", "1000:0", "0", "-1:5", "1000:", ":1000"] {
			let root = format!("{MINIMAL}\n[limits]\njob_user = {user:?}\n");
			assert!(Config::parse(&root).unwrap_err().contains("job_user"), "{user}");
		}
		for user in ["1000:1000", "65534", ""] {
			let fine = format!("{MINIMAL}\n[limits]\njob_user = {user:?}\n");
			assert_eq!(Config::parse(&fine).unwrap().limits.job_user, user);
		}
		let none = MINIMAL.replace("[\"ws://127.0.0.1:9944\"]", "[]");
		assert!(Config::parse(&none).unwrap_err().contains("at least one"));
	}
}
