//! The user a native job runs as (`[limits] job_user`), not the worker's: it cannot read the
//! worker's key, journal or configuration. It reaches only what it is given, through its
//! group: its program's copy and its lease's folder.

use std::path::Path;

use super::StartError;

/// `job_user` (`uid:gid`, or a `uid` that is its own group) as numbers; `None` for `""`, the
/// worker's own user. Switching to another user needs root.
pub(super) fn job_user(user: &str) -> Result<Option<(u32, u32)>, StartError> {
	if user.is_empty() {
		return Ok(None);
	}
	let number = |part: &str| part.parse::<u32>().map_err(|_| format!("job_user {user:?}"));
	let (uid, gid) = match user.split_once(':') {
		Some((uid, gid)) => (number(uid)?, number(gid)?),
		None => (number(user)?, number(user)?),
	};
	if !rustix::process::geteuid().is_root() {
		return Err(StartError::Other(format!("{}", NotRoot(user.to_string()))));
	}
	Ok(Some((uid, gid)))
}

/// Why native jobs cannot run as `job_user` here.
#[derive(Debug)]
pub struct NotRoot(pub String);

impl std::fmt::Display for NotRoot {
	fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
		write!(
			f,
			"native jobs run as [limits] job_user {:?}, and only a worker running as root can \
			 switch to it (job_user = \"\" runs them as the worker's own user, which can read its \
			 key: only for programs that take nothing from a stranger)",
			self.0
		)
	}
}

/// Gives `path` to the group `gid` with `mode`: how a job's user reaches what it may.
pub(super) fn open_to_group(path: &Path, gid: u32, mode: u32) -> Result<(), StartError> {
	use std::os::unix::fs::PermissionsExt;
	std::os::unix::fs::chown(path, None, Some(gid))
		.map_err(|e| format!("cannot give {} to the job's group: {e}", path.display()))?;
	std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
		.map_err(|e| format!("{}: {e}", path.display()).into())
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn the_job_user_is_numbers_and_switching_to_it_needs_root() {
		assert!(matches!(job_user(""), Ok(None)));
		if rustix::process::geteuid().is_root() {
			assert!(matches!(job_user("65534:65534"), Ok(Some((65534, 65534)))));
			assert!(matches!(job_user("1000"), Ok(Some((1000, 1000)))));
		} else {
			let refused = job_user("65534:65534").unwrap_err().to_string();
			assert!(refused.contains("only a worker running as root"), "{refused}");
		}
		assert!(job_user("nobody").is_err());
	}
}
