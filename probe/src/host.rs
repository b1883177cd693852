//! The host side: CPU cores this process may use, total memory and free scratch space.

use std::path::Path;

#[derive(Debug)]
pub struct Host {
	pub cpu_cores: u32,
	pub ram_mib: u64,
	pub disk_gib: u64,
}

pub fn read(scratch: &Path) -> Result<Host, String> {
	// Honours CPU affinity and cgroup quotas, unlike a count of /proc/cpuinfo entries.
	let cpu_cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
	let meminfo = std::fs::read_to_string("/proc/meminfo")
		.map_err(|e| format!("cannot read /proc/meminfo: {e}"))?;
	let ram_mib = mem_total_kib(&meminfo)
		.ok_or_else(|| "/proc/meminfo has no MemTotal line".to_string())?
		/ 1024;
	let stat = rustix::fs::statvfs(scratch)
		.map_err(|e| format!("cannot read the free space at {}: {e}", scratch.display()))?;
	let disk_gib = stat.f_bavail.saturating_mul(stat.f_frsize) >> 30;
	Ok(Host { cpu_cores, ram_mib, disk_gib })
}

/// The bytes free for an unprivileged writer at `path`.
pub fn free_bytes(path: &Path) -> Result<u64, String> {
	let stat = rustix::fs::statvfs(path)
		.map_err(|e| format!("cannot read the free space at {}: {e}", path.display()))?;
	Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

fn mem_total_kib(meminfo: &str) -> Option<u64> {
	let line = meminfo.lines().find_map(|line| line.strip_prefix("MemTotal:"))?;
	line.trim().strip_suffix("kB")?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn mem_total_is_read_in_kib() {
		let meminfo = "MemTotal:       24591324 kB\nMemFree:         1000 kB\n";
		assert_eq!(mem_total_kib(meminfo), Some(24_591_324));
		assert_eq!(mem_total_kib("MemFree: 1 kB\n"), None);
	}

	#[test]
	fn this_machine_has_cores_memory_and_disk() {
		let dir = tempfile::tempdir().unwrap();
		let host = read(dir.path()).unwrap();
		assert!(host.cpu_cores >= 1 && host.ram_mib > 0);
		assert!(read(&dir.path().join("missing")).unwrap_err().contains("missing"));
	}
}
