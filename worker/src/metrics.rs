//! Prometheus metrics, served on loopback (`[metrics] listen`, `GET /metrics`). No lease ids as
//! labels: the series stay few however many leases run.

use prometheus::{
	Encoder, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
	Registry, TextEncoder,
};

/// Every metric the worker keeps.
#[derive(Clone)]
pub struct Metrics {
	pub registry: Registry,
	/// Leases by the journal's phase.
	pub leases: IntGaugeVec,
	/// Jobs by outcome: succeeded, failed, order_fault, host_short (given up for want of disk,
	/// a GPU or the engine), lost.
	pub jobs: IntCounterVec,
	pub job_seconds: Histogram,
	/// Bids by result: placed, retracted, refused, error.
	pub bids: IntCounterVec,
	/// Submissions by kind (ack, final, checkpoint, settle) and result (ok, error).
	pub submissions: IntCounterVec,
	/// Errors by component.
	pub errors: IntCounterVec,
	pub chain_connected: IntGauge,
	pub finalized_block: IntGauge,
	pub reconnects: IntCounter,
	/// From the block that created a lease to its job's start.
	pub accepted_to_running: Histogram,
}

impl Metrics {
	pub fn new() -> Self {
		let registry =
			Registry::new_custom(Some("stint_worker".into()), None).expect("a valid prefix");
		let gauge_vec = |name: &str, help: &str, labels: &[&str]| {
			let metric = IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric");
			registry.register(Box::new(metric.clone())).expect("registered once");
			metric
		};
		let counter_vec = |name: &str, help: &str, labels: &[&str]| {
			let metric = IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric");
			registry.register(Box::new(metric.clone())).expect("registered once");
			metric
		};
		let histogram = |name: &str, help: &str, buckets: Vec<f64>| {
			let metric = Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets))
				.expect("valid metric");
			registry.register(Box::new(metric.clone())).expect("registered once");
			metric
		};
		let gauge = |name: &str, help: &str| {
			let metric = IntGauge::new(name, help).expect("valid metric");
			registry.register(Box::new(metric.clone())).expect("registered once");
			metric
		};
		let reconnects =
			IntCounter::new("reconnects_total", "Reconnections to a node").expect("valid metric");
		registry.register(Box::new(reconnects.clone())).expect("registered once");
		Self {
			leases: gauge_vec("leases", "Leases by the worker's phase", &["phase"]),
			jobs: counter_vec("jobs_total", "Jobs by outcome", &["outcome"]),
			job_seconds: histogram(
				"job_duration_seconds",
				"How long jobs ran",
				vec![1.0, 10.0, 60.0, 600.0, 3600.0, 6.0 * 3600.0, 24.0 * 3600.0],
			),
			bids: counter_vec("bids_total", "Bids by result", &["result"]),
			submissions: counter_vec(
				"submissions_total",
				"Extrinsics sent by kind and result",
				&["kind", "result"],
			),
			errors: counter_vec("errors_total", "Errors by component", &["component"]),
			chain_connected: gauge("chain_connected", "1 while a node answers"),
			finalized_block: gauge("finalized_block", "The last finalized block seen"),
			reconnects,
			accepted_to_running: histogram(
				"accepted_to_running_seconds",
				"From the lease's block to its job's start",
				vec![0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0],
			),
			registry,
		}
	}

	/// The text exposition format.
	pub fn render(&self) -> String {
		let mut buffer = Vec::new();
		TextEncoder::new()
			.encode(&self.registry.gather(), &mut buffer)
			.expect("encoding to memory cannot fail");
		String::from_utf8(buffer).expect("the text format is UTF-8")
	}

	/// Serves `GET /metrics` on `listen` from a runtime and threads of its own, within
	/// [`crate::http::Limits::METRICS`].
	pub fn serve(&self, listen: std::net::SocketAddr) -> Result<std::net::SocketAddr, String> {
		use crate::http::{self, Reply};
		let metrics = self.clone();
		let handler = move |request: http::Request| match request.url.as_str() {
			"/metrics" => Reply::text(200, metrics.render()).with_type("text/plain; version=0.0.4"),
			_ => Reply::text(404, "not found"),
		};
		http::serve("metrics", listen, http::Limits::METRICS, std::sync::Arc::new(handler))
	}
}

impl Default for Metrics {
	fn default() -> Self {
		Self::new()
	}
}

#[cfg(test)]
mod tests {
	#[test]
	fn the_exposition_names_every_metric_without_lease_ids() {
		let metrics = super::Metrics::new();
		metrics.jobs.with_label_values(&["succeeded"]).inc();
		metrics.leases.with_label_values(&["Running"]).set(2);
		metrics.finalized_block.set(42);
		let text = metrics.render();
		assert!(text.contains("stint_worker_jobs_total{outcome=\"succeeded\"} 1"), "{text}");
		assert!(text.contains("stint_worker_leases{phase=\"Running\"} 2"));
		assert!(text.contains("stint_worker_finalized_block 42"));
		assert!(!text.contains("lease=\""));
	}
}
