//! `stint-worker`: the provider's daemon.
//!
//! - `run --config worker.toml`: follow the chain, run the leases assigned to this worker key,
//!   commit each result once, bid, settle, serve outputs to buyers;
//! - `run-once job.toml`: one job through the executor, no chain; prints the receipt;
//! - `probe`: this machine's GPUs, CPU cores, memory and free disk as the provider file's
//!   `[hardware]` section;
//! - `journal export|import`: move a worker's state to another machine.

use std::{collections::HashSet, path::PathBuf, process::ExitCode, sync::Arc};

use clap::{Parser, Subcommand, ValueEnum};
use stint_worker::{
	config::{Config, ExecutorChoice, Limits, NativeProgram},
	executor::{docker::Docker, native::Native, Executor},
	gpu::{Gpus, When},
	journal::Journal,
	log,
	once::{run_once_with, OnceJob},
	runner::Worker,
};

#[derive(Parser)]
#[command(name = "stint-worker", version, about = "The Stint provider worker")]
struct Cli {
	/// Log lines as text or JSON (one object per line).
	#[arg(long, value_enum, default_value = "text", global = true)]
	log_format: LogFormat,
	#[command(subcommand)]
	command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
	Text,
	Json,
}

#[derive(Subcommand)]
enum Command {
	/// Runs the worker: finds this key's leases on chain and runs them.
	Run {
		#[arg(long, default_value = "worker.toml")]
		config: PathBuf,
		/// Take over a lease acknowledged elsewhere with this key (repeatable).
		#[arg(long = "adopt")]
		adopt: Vec<u64>,
	},
	/// Runs the job of a buyer's job file (the file `stint order create` takes) through the
	/// executor, without a chain, and prints its receipt.
	RunOnce {
		job: PathBuf,
		/// Where the inputs, outputs, logs and receipt go (relative: from the job file's
		/// folder).
		#[arg(long, default_value = "run-once-out")]
		out: PathBuf,
		/// A GPU to pass, by UUID as `nvidia-smi -L` prints it (repeatable).
		#[arg(long = "gpu")]
		gpus: Vec<String>,
		/// Then SIGTERM, a grace period and SIGKILL (stop reason TimeLimit).
		#[arg(long, default_value_t = stint_worker::once::DEFAULT_TIMEOUT_SECS)]
		timeout_secs: u64,
		/// Run this program natively (unisolated) instead of a container: the job's image must
		/// be `native/<name>@sha256:<the file's sha256>`, and the command's words past the
		/// first are the arguments the provider declares for it (relative: from the job
		/// file's folder).
		#[arg(long)]
		program: Option<PathBuf>,
		/// The user the job runs as, as `[limits] job_user` says it (`uid:gid`, never root;
		/// `""`: the image's own user).
		#[arg(long, default_value = stint_worker::config::DEFAULT_JOB_USER)]
		job_user: String,
	},
	/// Prints this machine's GPUs, CPU cores, memory and free disk as the provider file's
	/// `[hardware]` section (or JSON). Without a GPU (no driver, or none the driver sees) it
	/// prints the host with an empty GPU list and says why on stderr. With GPUs it self-tests
	/// each one (as `selftest` does), says how each did on stderr, and exits 1 if one failed.
	Probe {
		/// The directory jobs write to: its free space is the disk offered.
		#[arg(long, default_value = ".")]
		scratch: PathBuf,
		#[arg(long)]
		json: bool,
		/// Exit 1 when no GPU can be read (for scripts that need one).
		#[arg(long)]
		require_gpu: bool,
		/// Only read the GPUs; do not self-test them.
		#[arg(long)]
		no_selftest: bool,
	},
	/// Runs the GPU self-test on every GPU: a kernel shipped as PTX (and compiled by NVRTC
	/// where it loads), checked against its known sum and timed. Exit 1 if a GPU fails.
	Selftest {
		#[arg(long)]
		json: bool,
		/// Exit 1 when there is no GPU to test.
		#[arg(long)]
		require_gpu: bool,
	},
	/// Measures the Docker executor against a bare `docker run`: `runs` interleaved runs of a
	/// pinned image whose entry point exits at once; prints JSON.
	BenchExecutor {
		image: String,
		#[arg(long, default_value_t = 50)]
		runs: usize,
	},
	/// The worker's journal (stop the worker first: the journal is locked while it runs).
	Journal {
		#[command(subcommand)]
		command: JournalCmd,
	},
}

#[derive(Subcommand)]
enum JournalCmd {
	/// Writes the journal of `config`'s data directory as JSON to stdout.
	Export {
		#[arg(long, default_value = "worker.toml")]
		config: PathBuf,
	},
	/// Loads a JSON export into the journal of `config`'s data directory.
	Import {
		#[arg(long, default_value = "worker.toml")]
		config: PathBuf,
		file: PathBuf,
	},
}

fn main() -> ExitCode {
	let cli = Cli::parse();
	log::use_json(matches!(cli.log_format, LogFormat::Json));
	match cli.command {
		Command::Probe { scratch, json, require_gpu, no_selftest } => {
			probe(&scratch, json, require_gpu, !no_selftest)
		}
		Command::Run { config, adopt } => runtime().block_on(run(&config, adopt)),
		Command::RunOnce { job, out, gpus, timeout_secs, program, job_user } => {
			let local = Local { out, gpus, timeout_secs, program };
			runtime().block_on(once(&job, local, job_user))
		}
		Command::Journal { command } => journal(command),
		Command::Selftest { json, require_gpu } => selftest(json, require_gpu),
		Command::BenchExecutor { image, runs } => runtime().block_on(bench(&image, runs)),
	}
}

fn runtime() -> tokio::runtime::Runtime {
	tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime")
}

fn fail(component: &str, why: impl AsRef<str>) -> ExitCode {
	log::error(component, None, why);
	ExitCode::FAILURE
}

async fn run(path: &std::path::Path, adopt: Vec<u64>) -> ExitCode {
	let config = match Config::load(path) {
		Ok(config) => config,
		Err(e) => return fail("config", e.to_string()),
	};
	let adopt = adopt.into_iter().collect::<HashSet<_>>();
	// Open files up to the hard limit: however many connections strangers open to the outputs
	// API (which caps its own), descriptors remain for the chain, Docker and the disk.
	match stint_worker::http::raise_open_files() {
		(Some(before), Some(after)) if after > before => {
			log::info("worker", None, format!("open-file limit raised from {before} to {after}"))
		}
		_ => {}
	}
	match config.worker.executor {
		ExecutorChoice::Docker => {
			// An engine that does not answer yet (a machine still booting, a daemon restarting)
			// does not stop the worker: its metrics, its outputs API and its watch over the
			// chain start anyway; it acknowledges and bids on nothing until the engine answers.
			let rules = config.limits.pull_rules();
			let docker = match Docker::connect().await {
				Ok(docker) => {
					let version = docker.api_version().unwrap_or_default();
					log::info(
						"executor",
						None,
						format!("Docker engine, API {version} (negotiated)"),
					);
					docker
				}
				Err(e) => {
					log::alert(
						"executor",
						None,
						format!(
							"{e}: starting without it; no lease is acknowledged and no bid placed \
							 until it answers"
						),
					);
					Docker::default()
				}
			};
			run_with(config, docker.with_rules(rules), adopt).await
		}
		ExecutorChoice::Native => {
			let user = &config.limits.job_user;
			if !user.is_empty() && !rustix::process::geteuid().is_root() {
				let why = stint_worker::executor::native::NotRoot(user.clone());
				return fail("executor", why.to_string());
			}
			let state = config.worker.data_dir.join("native");
			match Native::new(config.native.programs.clone(), state) {
				Ok(native) => {
					log::warn(
						"executor",
						None,
						"native executor: jobs run unisolated, for trusted programs only",
					);
					run_with(config, native, adopt).await
				}
				Err(e) => fail("executor", e),
			}
		}
	}
}

async fn run_with<E: Executor>(config: Config, executor: E, adopt: HashSet<u64>) -> ExitCode {
	let key = match stint_client::keypair(&config.worker.key) {
		Ok(key) => key,
		Err(e) => return fail("config", format!("[worker] key: {e}")),
	};
	let gpus = Gpus::detect(config.worker.gpus);
	// Never GPUs through a toolkit an image can take over: the worker does not start.
	if let Err(why) = gpus.settle(&executor, When::Start).await {
		return fail("gpu", why);
	}
	let worker: Arc<Worker<E>> = match Worker::new(config, key, executor, gpus, adopt) {
		Ok(worker) => worker,
		Err(e) => return fail("worker", e.to_string()),
	};
	if let Err(e) = worker.serve() {
		return fail("api", e.to_string());
	}
	tokio::select! {
		result = worker.run() => match result {
			Ok(()) => ExitCode::SUCCESS,
			Err(e) => {
				log::error("chain", None, e.to_string());
				ExitCode::from(2)
			}
		},
		_ = tokio::signal::ctrl_c() => {
			log::info("worker", None, "interrupted: jobs keep running and are found again at restart");
			ExitCode::SUCCESS
		}
	}
}

/// What `run-once` takes beside the job file: what only this machine decides.
struct Local {
	out: PathBuf,
	gpus: Vec<String>,
	timeout_secs: u64,
	program: Option<PathBuf>,
}

async fn once(path: &std::path::Path, local: Local, job_user: String) -> ExitCode {
	if !job_user.is_empty() && !stint_worker::config::valid_job_user(&job_user) {
		return fail("run-once", format!("--job-user {job_user:?}: give uid:gid, not root's"));
	}
	let limits = Limits { job_user, ..Limits::default() };
	let text = match std::fs::read_to_string(path) {
		Ok(text) => text,
		Err(e) => return fail("run-once", format!("{}: {e}", path.display())),
	};
	// Relative to the job file's folder; Docker binds absolute paths only.
	let mut job = match OnceJob::from_file(&text, absolute_beside(path, &local.out)) {
		Ok(job) => job,
		Err(e) => return fail("run-once", format!("{}: {e}", path.display())),
	};
	job.gpus = local.gpus;
	job.timeout_secs = local.timeout_secs;
	let report = match &local.program {
		// A native program: the job's image names it, pinned by the file's sha256.
		Some(program) => {
			let program = absolute_beside(path, program);
			let image = &job.job.image;
			let name = image.split('@').next().unwrap_or_default();
			let name = name.strip_prefix("native/").unwrap_or(name).to_string();
			let sha256 = image.rsplit_once(':').map(|(_, d)| d.to_string()).unwrap_or_default();
			// Run by its provider: the words after the program's name are the arguments it
			// declares for it.
			let args = job.job.command.iter().skip(1).cloned().collect();
			let programs = vec![NativeProgram { name, path: program, sha256, args }];
			job.job.command.truncate(1);
			match Native::new(programs, job.out.join(".native")) {
				Ok(native) => run_once_with(&native, &job, limits).await,
				Err(e) => return fail("executor", e),
			}
		}
		None => match Docker::connect().await {
			Ok(docker) => {
				let docker = docker.with_rules(limits.pull_rules());
				run_once_with(&docker, &job, limits).await
			}
			Err(e) => return fail("executor", e),
		},
	};
	match report {
		Ok(report) => {
			println!("{}", serde_json::to_string_pretty(&report).expect("plain data serializes"));
			match report.exit_code {
				0 => ExitCode::SUCCESS,
				_ => ExitCode::from(3),
			}
		}
		Err(e) => fail("run-once", e),
	}
}

/// `path` as an absolute path, taken relative to the folder of `file` when relative.
fn absolute_beside(file: &std::path::Path, path: &std::path::Path) -> PathBuf {
	let base = file.parent().unwrap_or(std::path::Path::new("."));
	std::path::absolute(base.join(path)).unwrap_or_else(|_| base.join(path))
}

fn journal(command: JournalCmd) -> ExitCode {
	let (JournalCmd::Export { config } | JournalCmd::Import { config, .. }) = &command;
	let config = match Config::load(config) {
		Ok(config) => config,
		Err(e) => return fail("config", e.to_string()),
	};
	let journal = match Journal::open(&config.worker.data_dir.join("journal.redb")) {
		Ok(journal) => journal,
		Err(e) => return fail("journal", e.to_string()),
	};
	match command {
		JournalCmd::Export { .. } => match journal.export() {
			Ok(export) => {
				println!("{}", serde_json::to_string_pretty(&export).expect("plain data"));
				ExitCode::SUCCESS
			}
			Err(e) => fail("journal", e.to_string()),
		},
		JournalCmd::Import { file, .. } => {
			let parsed = std::fs::read_to_string(&file)
				.map_err(|e| e.to_string())
				.and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()));
			match parsed.map(|export| journal.import(&export).map_err(|e| e.to_string())) {
				Ok(Ok(())) => ExitCode::SUCCESS,
				Ok(Err(e)) | Err(e) => fail("journal", e),
			}
		}
	}
}

async fn bench(image: &str, runs: usize) -> ExitCode {
	let docker = match Docker::connect().await {
		Ok(docker) => docker,
		Err(e) => return fail("executor", e),
	};
	let scratch = match tempfile_dir() {
		Ok(dir) => dir,
		Err(e) => return fail("bench", e),
	};
	let result = stint_worker::bench::executor_overhead(&docker, image, runs, &scratch).await;
	let _ = std::fs::remove_dir_all(&scratch);
	match result {
		Ok(bench) => {
			println!("{}", serde_json::to_string_pretty(&bench).expect("plain data"));
			ExitCode::SUCCESS
		}
		Err(e) => fail("bench", e),
	}
}

/// A fresh folder under the system's temporary directory.
fn tempfile_dir() -> Result<PathBuf, String> {
	let dir = std::env::temp_dir().join(format!("stint-bench-{}", stint_worker::unix_ms()));
	std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
	Ok(dir)
}

fn selftest(json: bool, require_gpu: bool) -> ExitCode {
	match stint_probe::selftest::run() {
		Ok(tests) => {
			if json {
				println!("{}", serde_json::to_string_pretty(&tests).expect("plain data"));
			} else {
				for test in &tests {
					println!("{}", stint_worker::gpu::describe(test));
				}
			}
			match tests.iter().all(|t| t.passed()) {
				true => ExitCode::SUCCESS,
				false => ExitCode::FAILURE,
			}
		}
		Err(why) => {
			if json {
				println!("[]");
			}
			eprintln!("stint-worker: selftest: no GPU: {why}");
			match require_gpu {
				true => ExitCode::FAILURE,
				false => ExitCode::SUCCESS,
			}
		}
	}
}

fn probe(scratch: &std::path::Path, json: bool, require_gpu: bool, selftest: bool) -> ExitCode {
	let (hardware, missing) = match stint_probe::machine_or_host(scratch) {
		Ok(read) => read,
		Err(error) => {
			eprintln!("stint-worker: {error}");
			return ExitCode::FAILURE;
		}
	};
	if json {
		println!("{}", serde_json::to_string_pretty(&hardware).expect("plain data serializes"));
	} else {
		print!("{}", stint_probe::to_toml(&hardware));
	}
	match missing {
		None if !selftest => ExitCode::SUCCESS,
		// The GPUs read: each must also compute right before it is offered.
		None => match stint_probe::selftest::run() {
			Ok(tests) => {
				let mut passed = true;
				for test in &tests {
					eprintln!("stint-worker: probe: {}", stint_worker::gpu::describe(test));
					if !test.passed() {
						eprintln!(
							"stint-worker: probe: {} failed its self-test: do not offer it",
							test.uuid
						);
						passed = false;
					}
				}
				match passed {
					true => ExitCode::SUCCESS,
					false => ExitCode::FAILURE,
				}
			}
			Err(why) => {
				eprintln!("stint-worker: probe: the GPUs were read but not self-tested: {why}");
				ExitCode::FAILURE
			}
		},
		Some(why) => {
			eprintln!("stint-worker: probe: no GPU: {why}");
			if require_gpu {
				ExitCode::FAILURE
			} else {
				ExitCode::SUCCESS
			}
		}
	}
}
