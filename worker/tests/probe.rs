//! `stint-worker probe` through the real CUDA driver path, without a GPU: the driver library is a
//! stand-in (`e2e/stand-in/libcuda.c`: the same entry points and ABI as `libcuda.so`), found through
//! `LD_LIBRARY_PATH` exactly as the NVIDIA driver's library would be.

use std::{path::Path, process::Command};

use stint_e2e::{build_cuda_stand_in, stand_in_uuid};

fn probe(lib_dir: &Path, mode: &str, args: &[&str]) -> std::process::Output {
	Command::new(env!("CARGO_BIN_EXE_stint-worker"))
		.arg("probe")
		.args(args)
		.env("LD_LIBRARY_PATH", lib_dir)
		.env("STUB_CUDA", mode)
		.output()
		.unwrap()
}

#[test]
fn probe_reads_every_gpu_the_driver_reports() {
	let dir = tempfile::tempdir().unwrap();
	build_cuda_stand_in(dir.path()).unwrap();
	let scratch = dir.path().to_str().unwrap();
	let out = probe(dir.path(), "", &["--json", "--scratch", scratch, "--no-selftest"]);
	assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
	let hardware: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
	let gpus = hardware["gpus"].as_array().unwrap();
	assert_eq!(gpus.len(), 2);
	assert_eq!(gpus[0]["model"], "NVIDIA H200");
	assert_eq!(gpus[0]["vram_mib"], 143155);
	assert_eq!(gpus[0]["compute_capability"], "9.0");
	assert_eq!(gpus[0]["cuda_driver_version"], 12080);
	assert_eq!(gpus[0]["interface"], "Sxm");
	assert_eq!(gpus[0]["uuid"], stand_in_uuid(0));
	assert_eq!(gpus[1]["model"], "NVIDIA H100 PCIe");
	assert_eq!(gpus[1]["compute_capability"], "8.9");
	assert_eq!(gpus[1]["interface"], "Pcie");
	assert_eq!(gpus[1]["uuid"], stand_in_uuid(1));
	assert!(hardware["cpu_cores"].as_u64().unwrap() >= 1);
	assert!(hardware["ram_mib"].as_u64().unwrap() > 0);

	// The default output is the provider file's [hardware] section. By default the GPUs read
	// are self-tested too: the stand-in driver runs no kernel, so they fail it (exit 1, said on
	// stderr), and the reading is printed all the same.
	let out = probe(dir.path(), "", &[]);
	let text = String::from_utf8(out.stdout).unwrap();
	assert!(text.starts_with("[hardware]\n") && text.contains("[[hardware.gpus]]"), "{text}");
	let stderr = String::from_utf8_lossy(&out.stderr);
	assert_eq!(out.status.code(), Some(1), "{stderr}");
	assert!(stderr.contains("self-test"), "{stderr}");
}

#[test]
fn without_a_gpu_the_probe_prints_the_host_and_says_why() {
	let dir = tempfile::tempdir().unwrap();
	build_cuda_stand_in(dir.path()).unwrap();
	let out = probe(dir.path(), "no-device", &["--json"]);
	assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
	let hardware: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
	assert_eq!(hardware["gpus"], serde_json::json!([]));
	assert!(hardware["cpu_cores"].as_u64().unwrap() >= 1);
	assert!(hardware["ram_mib"].as_u64().unwrap() > 0);
	assert_eq!(
		String::from_utf8_lossy(&out.stderr),
		"stint-worker: probe: no GPU: the CUDA driver sees no GPU\n"
	);

	// --require-gpu turns the same reading into a failure, still saying why.
	let out = probe(dir.path(), "no-device", &["--require-gpu"]);
	assert_eq!(out.status.code(), Some(1));
	assert!(String::from_utf8_lossy(&out.stderr).contains("the CUDA driver sees no GPU"));

	// No driver library at all (unless this machine has a real one).
	let empty = tempfile::tempdir().unwrap();
	let out = probe(empty.path(), "", &[]);
	assert_eq!(out.status.code(), Some(0));
	let text = String::from_utf8(out.stdout).unwrap();
	assert!(text.starts_with("[hardware]\n"), "{text}");
	let stderr = String::from_utf8_lossy(&out.stderr);
	if !text.contains("[[hardware.gpus]]") {
		assert!(stderr.starts_with("stint-worker: probe: no GPU: no CUDA driver"), "{stderr}");
	}
	assert!(!stderr.contains("panicked"), "{stderr}");
	let out = probe(empty.path(), "", &["--require-gpu"]);
	assert_eq!(out.status.code(), Some(if text.contains("[[hardware.gpus]]") { 0 } else { 1 }));
}
