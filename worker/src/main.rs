//! `stint-worker`: the provider's daemon. Its first command is `probe`, which reads the machine
//! (GPUs through the CUDA driver, CPU cores, memory, free scratch space) and prints it as the
//! provider file's `[hardware]` section, exactly what `stint provider register --probe` registers
//! (which, unlike `probe`, refuses a machine without a GPU).

use clap::{Parser, Subcommand};
use std::{path::PathBuf, process::ExitCode};

#[derive(Parser)]
#[command(name = "stint-worker", version, about = "The Stint provider worker")]
struct Cli {
	#[command(subcommand)]
	command: Command,
}

#[derive(Subcommand)]
enum Command {
	/// Prints this machine's GPUs, CPU cores, memory and free disk as the provider file's
	/// `[hardware]` section (or JSON). Without a GPU (no driver, or none the driver sees) it
	/// prints the host with an empty GPU list and says why on stderr.
	Probe {
		/// The directory jobs write to: its free space is the disk offered.
		#[arg(long, default_value = ".")]
		scratch: PathBuf,
		#[arg(long)]
		json: bool,
		/// Exit 1 when no GPU can be read (for scripts that need one).
		#[arg(long)]
		require_gpu: bool,
	},
}

fn main() -> ExitCode {
	match Cli::parse().command {
		Command::Probe { scratch, json, require_gpu } => probe(&scratch, json, require_gpu),
	}
}

fn probe(scratch: &std::path::Path, json: bool, require_gpu: bool) -> ExitCode {
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
		None => ExitCode::SUCCESS,
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
