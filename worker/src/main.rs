//! `stint-worker`: the provider's daemon. Its first command is `probe`, which reads the machine
//! (GPUs through the CUDA driver, CPU cores, memory, free scratch space) and prints it as the
//! provider file's `[hardware]` section, exactly what `stint provider register --probe` registers.

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
	/// `[hardware]` section (or JSON). Exits 1, saying why, when no GPU can be read.
	Probe {
		/// The directory jobs write to: its free space is the disk offered.
		#[arg(long, default_value = ".")]
		scratch: PathBuf,
		#[arg(long)]
		json: bool,
	},
}

fn main() -> ExitCode {
	match Cli::parse().command {
		Command::Probe { scratch, json } => match stint_probe::machine(&scratch) {
			Ok(hardware) => {
				if json {
					println!(
						"{}",
						serde_json::to_string_pretty(&hardware).expect("plain data serializes")
					);
				} else {
					print!("{}", stint_probe::to_toml(&hardware));
				}
				ExitCode::SUCCESS
			}
			Err(error) => {
				eprintln!("stint-worker: {error}");
				ExitCode::FAILURE
			}
		},
	}
}
