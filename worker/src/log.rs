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
	let json = JSON.load(Ordering::Relaxed);
	eprintln!("{}", format(json, crate::unix_ms(), level, component, lease, message));
}

/// One line as text (`[level] component lease=N: message`) or as a JSON object.
fn format(
	json: bool,
	ts_ms: u64,
	level: Level,
	component: &str,
	lease: Option<u64>,
	message: &str,
) -> String {
	if json {
		let mut object = serde_json::json!({
			"ts_ms": ts_ms,
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
	}
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

/// A failure that repeats every block (an engine down, a node that errs) said once: when it
/// starts, when it changes, and when it clears; the rounds in between stay quiet.
#[derive(Debug, Default)]
pub struct Repeats(std::sync::Mutex<Option<String>>);

impl Repeats {
	/// Whether `why` is worth a line: it is not the failure said last.
	pub fn fresh(&self, why: &str) -> bool {
		let mut last = self.0.lock().expect("not poisoned");
		if last.as_deref() == Some(why) {
			return false;
		}
		*last = Some(why.to_string());
		true
	}

	/// The failure cleared: whether one was standing (worth a line that it cleared).
	pub fn clear(&self) -> bool {
		self.0.lock().expect("not poisoned").take().is_some()
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn a_repeated_failure_is_said_when_it_starts_changes_and_clears() {
		let repeats = Repeats::default();
		assert!(!repeats.clear(), "nothing stood");
		assert!(repeats.fresh("engine down"));
		assert!(!repeats.fresh("engine down"), "the next blocks stay quiet");
		assert!(repeats.fresh("node errs"), "a different failure is said");
		assert!(repeats.clear(), "its end is said");
		assert!(!repeats.clear());
		assert!(repeats.fresh("node errs"), "the same failure again, after it cleared");
	}

	#[test]
	fn a_line_about_a_lease_carries_its_id_as_text_and_as_json() {
		let text = format(false, 1, Level::Alert, "duties", Some(7), "left \"alone\"");
		assert_eq!(text, "[ALERT] duties lease=7: left \"alone\"");
		assert_eq!(format(false, 1, Level::Info, "chain", None, "ok"), "[info] chain: ok");
		let json = format(true, 1_700, Level::Warn, "duties", Some(7), "left \"alone\"\n");
		let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
		assert_eq!(
			parsed,
			serde_json::json!({
				"ts_ms": 1_700, "level": "warn", "component": "duties", "lease": 7,
				"msg": "left \"alone\"\n",
			})
		);
		assert!(!json.contains('\n'), "one line: {json}");
		let bare: serde_json::Value =
			serde_json::from_str(&format(true, 1, Level::Error, "api", None, "x")).unwrap();
		assert!(bare.get("lease").is_none());
	}
}
