//! Log lines: one per event, to stderr, as text or JSON (`--log-format json`). Every line about a
//! lease carries its id.

use std::sync::atomic::{AtomicBool, Ordering};

static JSON: AtomicBool = AtomicBool::new(false);

/// Writes JSON lines from now on.
pub fn use_json(json: bool) {
	JSON.store(json, Ordering::Relaxed);
}

/// How bad it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
	Info,
	Warn,
	/// Needs the operator: the worker cannot do its duty by itself.
	Alert,
	Error,
}

impl Level {
	fn name(self) -> &'static str {
		match self {
			Self::Info => "info",
			Self::Warn => "warn",
			Self::Alert => "ALERT",
			Self::Error => "error",
		}
	}
}

/// Writes one line: `component`, the lease it is about (if any), the message.
pub fn line(level: Level, component: &str, lease: Option<u64>, message: &str) {
	let text = if JSON.load(Ordering::Relaxed) {
		let mut object = serde_json::json!({
			"ts_ms": crate::unix_ms(),
			"level": level.name(),
			"component": component,
			"msg": message,
		});
		if let Some(lease) = lease {
			object["lease"] = lease.into();
		}
		object.to_string()
	} else {
		match lease {
			Some(lease) => format!("[{}] {component} lease={lease}: {message}", level.name()),
			None => format!("[{}] {component}: {message}", level.name()),
		}
	};
	eprintln!("{text}");
}

pub fn info(component: &str, lease: Option<u64>, message: impl AsRef<str>) {
	line(Level::Info, component, lease, message.as_ref());
}

pub fn warn(component: &str, lease: Option<u64>, message: impl AsRef<str>) {
	line(Level::Warn, component, lease, message.as_ref());
}

pub fn alert(component: &str, lease: Option<u64>, message: impl AsRef<str>) {
	line(Level::Alert, component, lease, message.as_ref());
}

pub fn error(component: &str, lease: Option<u64>, message: impl AsRef<str>) {
	line(Level::Error, component, lease, message.as_ref());
}
