//! Amounts in STINT as people write them (`1.5`, `0.000001`, `100`) and as the chain counts them
//! (units of 10^-12 STINT).

use stint_primitives::{Balance, STINT, TOKEN_DECIMALS};

/// Parses `text` as an amount of STINT with up to 12 decimals.
pub fn parse_stint(text: &str) -> Result<Balance, String> {
	let text = text.trim().trim_end_matches("STINT").trim();
	let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
	let bad = || format!("`{text}` is not an amount of STINT (e.g. 1.5)");
	if whole.is_empty() && fraction.is_empty() {
		return Err(bad());
	}
	if fraction.len() > TOKEN_DECIMALS as usize {
		return Err(format!("`{text}` has more than {TOKEN_DECIMALS} decimals"));
	}
	let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
	if !digits(whole) || !digits(fraction) {
		return Err(bad());
	}
	let whole: Balance = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
	let scale = 10u128.pow(TOKEN_DECIMALS as u32 - fraction.len() as u32);
	let fraction: Balance =
		if fraction.is_empty() { 0 } else { fraction.parse().map_err(|_| bad())? };
	whole
		.checked_mul(STINT)
		.and_then(|w| w.checked_add(fraction * scale))
		.ok_or_else(|| format!("`{text}` is too large"))
}

/// Formats `units` as STINT, without trailing zeros: `1.5 STINT`.
pub fn format_stint(units: Balance) -> String {
	let whole = units / STINT;
	let fraction = units % STINT;
	if fraction == 0 {
		return format!("{whole} STINT");
	}
	let fraction = format!("{fraction:012}");
	format!("{whole}.{} STINT", fraction.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn amounts_round_trip() {
		assert_eq!(parse_stint("1.5"), Ok(1_500_000_000_000));
		assert_eq!(parse_stint("100"), Ok(100 * STINT));
		assert_eq!(parse_stint("0.000000000001"), Ok(1));
		assert_eq!(parse_stint(".5 STINT"), Ok(STINT / 2));
		assert!(parse_stint("1.0000000000001").is_err());
		assert!(parse_stint("abc").is_err());
		assert!(parse_stint("").is_err());
		assert!(parse_stint("-1").is_err());
		assert_eq!(format_stint(1_500_000_000_000), "1.5 STINT");
		assert_eq!(format_stint(100 * STINT), "100 STINT");
		assert_eq!(format_stint(1), "0.000000000001 STINT");
	}
}
