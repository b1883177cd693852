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
	// are self-tested too (the stand-in driver runs the kernel on the host), each verdict on
	// stderr.
	let out = probe(dir.path(), "", &[]);
	let text = String::from_utf8(out.stdout).unwrap();
	assert!(text.starts_with("[hardware]\n") && text.contains("[[hardware.gpus]]"), "{text}");
	let stderr = String::from_utf8_lossy(&out.stderr);
	assert_eq!(out.status.code(), Some(0), "{stderr}");
	for ordinal in 0..2 {
		let uuid = stand_in_uuid(ordinal);
		assert!(stderr.contains(&format!("self-test {uuid} ({ordinal}, ")), "{stderr}");
	}
	assert_eq!(stderr.matches(": PTX kernel ok in ").count(), 2, "{stderr}");

	// A GPU that computes wrong is named, and the probe fails: it must not be registered.
	let out = probe(dir.path(), "bad-1", &[]);
	let stderr = String::from_utf8_lossy(&out.stderr);
	assert_eq!(out.status.code(), Some(1), "{stderr}");
	let (good, bad) = (stand_in_uuid(0), stand_in_uuid(1));
	assert!(stderr.contains(&format!("{bad} failed its self-test: do not offer it")), "{stderr}");
	assert!(!stderr.contains(&format!("{good} failed")), "{stderr}");
}

/// `stint-worker selftest` with `envs` on top of the stand-in driver in `lib_path`.
fn selftest(lib_path: &str, envs: &[(&str, &str)], json: bool) -> (Option<i32>, String, String) {
	let out = Command::new(env!("CARGO_BIN_EXE_stint-worker"))
		.arg("selftest")
		.args(json.then_some("--json"))
		.env("LD_LIBRARY_PATH", lib_path)
		.env_remove("STUB_CUDA")
		.env_remove("STUB_CUDA_VERSION")
		.envs(envs.iter().copied())
		.output()
		.unwrap();
	let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
	(out.status.code(), text(out.stdout), text(out.stderr))
}

fn runs(stdout: &str) -> Vec<serde_json::Value> {
	serde_json::from_str::<serde_json::Value>(stdout).unwrap().as_array().unwrap().clone()
}

#[test]
fn the_self_test_runs_the_ptx_kernel_through_the_driver_and_fails_a_gpu_that_computes_wrong() {
	let dir = tempfile::tempdir().unwrap();
	build_cuda_stand_in(dir.path()).unwrap();
	let lib = dir.path().to_str().unwrap();
	let expected = stint_probe::selftest::expected_checksum(
		stint_probe::selftest::ELEMENTS,
		stint_probe::selftest::SEED,
	);

	// Through cudarc and the driver API: context, module from the shipped PTX (which the
	// stand-in refuses unless it targets the device and a PTX version the driver knows), memory
	// on both allocators (GPU 0 has memory pools, GPU 1 not), the launch, the copy back.
	let (code, stdout, stderr) = selftest(lib, &[], true);
	assert_eq!(code, Some(0), "{stderr}");
	let tests = runs(&stdout);
	assert_eq!(tests.len(), 2, "{stdout}");
	for (ordinal, test) in tests.iter().enumerate() {
		assert_eq!(test["uuid"], stand_in_uuid(ordinal as u8));
		assert_eq!(test["expected"], expected);
		assert_eq!(test["ptx"]["Ok"]["checksum"], expected, "{stdout}");
		assert_eq!(test["ptx"]["Ok"]["ok"], true);
		assert!(test["ptx"]["Ok"]["millis"].as_f64().unwrap() > 0.0);
		// No NVRTC on this library path: not run, and no failure for it.
		assert_eq!(test["nvrtc"], serde_json::Value::Null);
	}

	// GPU 1 gets one element wrong: it fails, GPU 0 still passes; exit 1.
	let (code, stdout, _) = selftest(lib, &[("STUB_CUDA", "bad-1")], true);
	assert_eq!(code, Some(1));
	let tests = runs(&stdout);
	assert_eq!(tests[0]["ptx"]["Ok"]["ok"], true);
	assert_eq!(tests[1]["ptx"]["Ok"]["ok"], false);
	assert_ne!(tests[1]["ptx"]["Ok"]["checksum"], expected);
	let (code, stdout, _) = selftest(lib, &[("STUB_CUDA", "bad-1")], false);
	assert_eq!(code, Some(1));
	let lines: Vec<&str> = stdout.lines().collect();
	assert_eq!(lines.len(), 2, "{stdout}");
	assert!(lines[0].contains(": PTX kernel ok in "), "{stdout}");
	assert!(lines[1].contains(": PTX kernel WRONG SUM "), "{stdout}");
	assert!(lines[1].contains(&format!("(expected {expected})")), "{stdout}");

	// A driver older than the shipped PTX's version (7.0, CUDA 11.0's) refuses it: every GPU
	// fails, saying why.
	let (code, stdout, _) = selftest(lib, &[("STUB_CUDA_VERSION", "10020")], true);
	assert_eq!(code, Some(1));
	for test in runs(&stdout) {
		let why = test["ptx"]["Err"].as_str().unwrap();
		assert!(why.starts_with("loading the kernel: "), "{why}");
		assert!(why.contains("CUDA_ERROR_UNSUPPORTED_PTX_VERSION"), "{why}");
	}
}

#[test]
fn nvrtc_compiles_the_kernel_and_a_driver_older_than_nvrtc_fails_no_gpu() -> anyhow::Result<()> {
	let Some(tools) = stint_e2e::cuda_tools()? else { return Ok(()) };
	let dir = tempfile::tempdir()?;
	build_cuda_stand_in(dir.path())?;
	let lib = format!("{}:{}", dir.path().display(), tools.nvrtc_dir.display());

	// A driver as new as NVRTC 12.9 (CUDA 13.0 here): the kernel NVRTC compiled from CUDA C
	// runs too, and gives the sum.
	let (code, stdout, stderr) = selftest(&lib, &[("STUB_CUDA_VERSION", "13000")], true);
	assert_eq!(code, Some(0), "{stderr}");
	let expected = runs(&stdout)[0]["expected"].clone();
	for test in runs(&stdout) {
		assert_eq!(test["nvrtc"]["Ok"]["ok"], true, "{stdout}");
		assert_eq!(test["nvrtc"]["Ok"]["checksum"], expected);
		assert_eq!(test.get("nvrtc_unusable"), None);
	}
	// GPU 1 computing wrong fails NVRTC's kernel as well as the PTX one.
	let (code, stdout, _) =
		selftest(&lib, &[("STUB_CUDA_VERSION", "13000"), ("STUB_CUDA", "bad-1")], true);
	assert_eq!(code, Some(1));
	assert_eq!(runs(&stdout)[1]["nvrtc"]["Ok"]["ok"], false);

	// A CUDA 12.8 driver cannot load the PTX version NVRTC 12.9 writes: that is the machine's
	// libraries' mismatch, not the GPU's fault. Said, and the GPUs pass on the shipped PTX.
	let (code, stdout, stderr) = selftest(&lib, &[("STUB_CUDA_VERSION", "12080")], true);
	assert_eq!(code, Some(0), "{stderr}");
	for test in runs(&stdout) {
		assert_eq!(test["nvrtc"], serde_json::Value::Null);
		let why = test["nvrtc_unusable"].as_str().unwrap();
		assert!(why.contains("CUDA_ERROR_UNSUPPORTED_PTX_VERSION"), "{why}");
		assert_eq!(test["ptx"]["Ok"]["ok"], true);
	}
	let (_, stdout, _) = selftest(&lib, &[("STUB_CUDA_VERSION", "12080")], false);
	assert_eq!(stdout.matches("NVRTC kernel not run, not the GPU's fault").count(), 2, "{stdout}");
	Ok(())
}

#[test]
fn the_shipped_ptx_assembles_for_every_gpu_generation() -> anyhow::Result<()> {
	let Some(tools) = stint_e2e::cuda_tools()? else { return Ok(()) };
	let dir = tempfile::tempdir()?;
	let ptx = dir.path().join("fill.ptx");
	std::fs::write(&ptx, stint_probe::selftest::FILL_PTX)?;
	// Maxwell to Blackwell: what the driver's JIT does with it on each, ahead of time.
	for arch in
		["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]
	{
		let out = Command::new(&tools.ptxas)
			.arg(format!("-arch={arch}"))
			.arg(&ptx)
			.arg("-o")
			.arg(dir.path().join(format!("{arch}.cubin")))
			.output()?;
		assert!(out.status.success(), "{arch}: {}", String::from_utf8_lossy(&out.stderr));
	}
	// ptxas is no rubber stamp: a broken instruction is refused.
	std::fs::write(&ptx, stint_probe::selftest::FILL_PTX.replace("xor.b32", "xor.b31"))?;
	let out =
		Command::new(&tools.ptxas).args(["-arch=sm_90", "-o", "/dev/null"]).arg(&ptx).output()?;
	assert!(!out.status.success());
	Ok(())
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
