//! Events as people read them: accounts in SS58, byte arrays in hex, balances in STINT, using the
//! field types the metadata names for each event.

use crate::{format_stint, AccountId};
use subxt::{
	dynamic::Value,
	ext::scale_value::{Composite, Primitive, ValueDef},
	Metadata,
};

/// How a top-level event field is shown, from its type name in the metadata.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
	Account,
	Balance,
	Other,
}

fn kind_of(type_name: Option<&str>) -> Kind {
	match type_name {
		Some(name) if name.contains("AccountId") => Kind::Account,
		Some(name) if name.contains("Balance") => Kind::Balance,
		_ => Kind::Other,
	}
}

/// The fields of the event at `index` of `pallet`, decoded as `fields`, as text.
pub fn event_fields(metadata: &Metadata, pallet: &str, index: u8, fields: &Value) -> String {
	let kinds: Vec<Kind> = metadata
		.pallet_by_name(pallet)
		.and_then(|p| p.event_variant_by_index(index))
		.map(|variant| variant.fields.iter().map(|f| kind_of(f.type_name.as_deref())).collect())
		.unwrap_or_default();
	let kind = |i: usize| kinds.get(i).copied().unwrap_or(Kind::Other);
	match &fields.value {
		ValueDef::Composite(Composite::Named(named)) => {
			let shown: Vec<String> = named
				.iter()
				.enumerate()
				.map(|(i, (name, value))| format!("{name}: {}", show(value, kind(i))))
				.collect();
			if shown.is_empty() {
				String::new()
			} else {
				format!("{{ {} }}", shown.join(", "))
			}
		}
		ValueDef::Composite(Composite::Unnamed(values)) => {
			let shown: Vec<String> =
				values.iter().enumerate().map(|(i, value)| show(value, kind(i))).collect();
			if shown.is_empty() {
				String::new()
			} else {
				format!("({})", shown.join(", "))
			}
		}
		_ => show(fields, Kind::Other),
	}
}

/// The bytes of a value that is a non-empty sequence of `u8`, possibly inside single-field
/// wrappers such as `AccountId32([u8; 32])`.
fn bytes_of(value: &Value) -> Option<Vec<u8>> {
	let ValueDef::Composite(composite) = &value.value else { return None };
	let values: Vec<&Value> = composite.values().collect();
	if let [inner] = values.as_slice() {
		if let Some(bytes) = bytes_of(inner) {
			return Some(bytes);
		}
	}
	if values.is_empty() {
		return None;
	}
	values
		.iter()
		.map(|v| match &v.value {
			ValueDef::Primitive(Primitive::U128(n)) => u8::try_from(*n).ok(),
			_ => None,
		})
		.collect()
}

fn show(value: &Value, kind: Kind) -> String {
	if let Some(bytes) = bytes_of(value) {
		if kind == Kind::Account {
			if let Ok(account) = <[u8; 32]>::try_from(bytes.as_slice()) {
				return AccountId::from(account).to_string();
			}
		}
		return format!("0x{}", hex::encode(bytes));
	}
	match &value.value {
		ValueDef::Primitive(Primitive::U128(n)) if kind == Kind::Balance => format_stint(*n),
		ValueDef::Composite(Composite::Named(named)) => {
			let shown: Vec<String> =
				named.iter().map(|(name, v)| format!("{name}: {}", show(v, Kind::Other))).collect();
			format!("{{ {} }}", shown.join(", "))
		}
		ValueDef::Composite(Composite::Unnamed(values)) => {
			let shown: Vec<String> = values.iter().map(|v| show(v, kind)).collect();
			format!("({})", shown.join(", "))
		}
		ValueDef::Variant(variant) => {
			let inner = Value { value: ValueDef::Composite(variant.values.clone()), context: () };
			match variant.values.values().next() {
				None => variant.name.clone(),
				Some(_) => format!("{} {}", variant.name, show(&inner, Kind::Other)),
			}
		}
		_ => value.to_string(),
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	fn bytes(n: usize, b: u8) -> Value {
		Value::unnamed_composite((0..n).map(|_| Value::u128(b as u128)))
	}

	#[test]
	fn accounts_hashes_and_balances_read_as_people_write_them() {
		let alice = [
			0xd4, 0x35, 0x93, 0xc7, 0x15, 0xfd, 0xd3, 0x1c, 0x61, 0x14, 0x1a, 0xbd, 0x04, 0xa9,
			0x9f, 0xd6, 0x82, 0x2c, 0x85, 0x58, 0x85, 0x4c, 0xcd, 0xe3, 0x9a, 0x56, 0x84, 0xe7,
			0xa5, 0x6d, 0xa2, 0x7d,
		];
		let account = Value::unnamed_composite([Value::unnamed_composite(
			alice.iter().map(|b| Value::u128(*b as u128)),
		)]);
		assert_eq!(
			show(&account, Kind::Account),
			"5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY"
		);
		assert_eq!(show(&bytes(4, 0xab), Kind::Other), "0xabababab");
		assert_eq!(show(&Value::u128(2_500_000_000_000), Kind::Balance), "2.5 STINT");
		assert_eq!(show(&Value::u128(7), Kind::Other), "7");
		let nested = Value::named_composite([("order", Value::u128(3)), ("root", bytes(2, 1))]);
		assert_eq!(show(&nested, Kind::Other), "{ order: 3, root: 0x0101 }");
		let variant = Value::variant("Final", Composite::Unnamed(vec![]));
		assert_eq!(show(&variant, Kind::Other), "Final");
	}
}
