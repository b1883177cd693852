//! The NVIDIA Container Toolkit on the host, which gives containers their GPUs: through 1.17.7
//! its `createContainer` hook ran with the container's environment, so an image whose `ENV` set
//! `LD_PRELOAD` ran its own code on the host as root (CVE-2025-23266). Jobs get the loader's
//! variables emptied whatever their image sets (`executor::docker`), and with GPUs on the worker
//! does not start under a toolkit older than [`MIN_TOOLKIT`]: both, since either alone is one
//! mistake away from a buyer's image owning the provider's machine.

use std::{path::Path, process::Command};

/// A toolkit version: major, minor, patch.
pub type Version = (u32, u32, u32);

/// The oldest toolkit whose hooks an image's environment cannot take over.
pub const MIN_TOOLKIT: Version = (1, 17, 8);

/// The toolkit's programs that say its version (`--version`), in the order they are asked.
pub const PROGRAMS: [&str; 2] = ["nvidia-ctk", "nvidia-container-cli"];

/// The first `major.minor.patch` in `text` (`NVIDIA Container Toolkit CLI version 1.17.8`,
/// `cli-version: 1.17.8`); a suffix after the patch (`-1`, `~rc.1`) is ignored.
pub fn parse_version(text: &str) -> Option<Version> {
	text.split(|c: char| c.is_whitespace() || c == ':').find_map(|word| {
		let mut parts = word.splitn(3, '.');
		let major = parts.next()?.parse().ok()?;
		let minor = parts.next()?.parse().ok()?;
		let patch: String = parts.next()?.chars().take_while(char::is_ascii_digit).collect();
		Some((major, minor, patch.parse().ok()?))
	})
}

/// The version `program --version` says, if it runs and says one.
pub fn version_of(program: &Path) -> Option<Version> {
	let output = Command::new(program).arg("--version").output().ok()?;
	if !output.status.success() {
		return None;
	}
	parse_version(&String::from_utf8_lossy(&output.stdout))
}

/// The installed toolkit's version: what the first of [`PROGRAMS`] on the `PATH` that answers
/// says.
pub fn installed() -> Option<Version> {
	PROGRAMS.iter().find_map(|program| version_of(Path::new(program)))
}

/// Whether jobs may be given GPUs under toolkit `version`; if not, why, for the provider.
pub fn check(version: Version) -> Result<(), String> {
	if version >= MIN_TOOLKIT {
		return Ok(());
	}
	let show = |(major, minor, patch): Version| format!("{major}.{minor}.{patch}");
	Err(format!(
		"the NVIDIA Container Toolkit is {}: before {} an image's LD_PRELOAD runs on this host as \
		 root when its container starts (CVE-2025-23266). Upgrade the toolkit, or set gpus = \
		 \"off\" on a development chain",
		show(version),
		show(MIN_TOOLKIT)
	))
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn versions_are_read_as_both_programs_print_them() {
		let ctk = "NVIDIA Container Toolkit CLI version 1.17.8\ncommit: f202b80a9b9d0db00d9b1d73c0128c8962c55f4d";
		assert_eq!(parse_version(ctk), Some((1, 17, 8)));
		let cli = "cli-version: 1.16.2\nlib-version: 1.16.2\nbuild date: 2024-09-24T20:50+00:00";
		assert_eq!(parse_version(cli), Some((1, 16, 2)));
		assert_eq!(parse_version("version 1.18.0~rc.1"), Some((1, 18, 0)));
		assert_eq!(parse_version("version 1.17.8-1"), Some((1, 17, 8)));
		assert_eq!(parse_version("no version here 1.2"), None);
	}

	#[test]
	fn a_toolkit_before_1_17_8_is_refused_by_name() {
		assert!(check((1, 17, 8)).is_ok());
		assert!(check((1, 18, 0)).is_ok());
		assert!(check((2, 0, 0)).is_ok());
		for old in [(1, 17, 7), (1, 16, 2), (0, 99, 99)] {
			let why = check(old).unwrap_err();
			assert!(why.contains("CVE-2025-23266") && why.contains("1.17.8"), "{why}");
		}
	}

	/// A stand-in for the toolkit's program: what it prints is what the worker goes by.
	#[test]
	fn the_installed_version_is_what_the_program_says() {
		use std::os::unix::fs::PermissionsExt;
		let dir = tempfile::tempdir().unwrap();
		let program = dir.path().join("nvidia-ctk");
		std::fs::write(
			&program,
			"#!/bin/sh\necho 'NVIDIA Container Toolkit CLI version 1.17.7'\necho 'commit: abc'\n",
		)
		.unwrap();
		std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
		let version = version_of(&program).unwrap();
		assert_eq!(version, (1, 17, 7));
		assert!(check(version).is_err());
		assert_eq!(version_of(&dir.path().join("missing")), None);
	}
}
