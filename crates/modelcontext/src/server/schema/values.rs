//! What JSON Schema means by equal numbers, equal values and multiples, exactly: serde_json
//! keeps `1` and `1.0` apart and compares `u64` with `f64` through lossy casts, while the
//! schema compares numbers by their mathematical value.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

use serde_json::{Map, Number, Value};

/// A number as its exact value: every JSON integer fits `i128`, anything else is an `f64`.
#[derive(Clone, Copy)]
enum Exact {
    Integer(i128),
    Float(f64),
}

fn exact(number: &Number) -> Exact {
    if let Some(u) = number.as_u64() {
        Exact::Integer(i128::from(u))
    } else if let Some(i) = number.as_i64() {
        Exact::Integer(i128::from(i))
    } else {
        Exact::Float(number.as_f64().unwrap_or(f64::NAN))
    }
}

/// Compares two numbers by value; `None` only for a NaN, which JSON cannot carry.
pub(super) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (exact(a), exact(b)) {
        (Exact::Integer(a), Exact::Integer(b)) => Some(a.cmp(&b)),
        (Exact::Float(a), Exact::Float(b)) => a.partial_cmp(&b),
        (Exact::Integer(a), Exact::Float(b)) => compare_integer_float(a, b),
        (Exact::Float(a), Exact::Integer(b)) => compare_integer_float(b, a).map(Ordering::reverse),
    }
}

/// `integer` against `float` without rounding either: the float's integer part is exact in
/// `i128` (every JSON integer is far below 2^100), and its fraction breaks a tie.
fn compare_integer_float(integer: i128, float: f64) -> Option<Ordering> {
    const BEYOND_ANY_INTEGER: f64 = 1e30;
    if float.is_nan() {
        return None;
    }
    if float >= BEYOND_ANY_INTEGER {
        return Some(Ordering::Less);
    }
    if float <= -BEYOND_ANY_INTEGER {
        return Some(Ordering::Greater);
    }
    let whole = float.trunc();
    // Exact: |whole| < 1e30 < 2^127.
    #[allow(clippy::cast_possible_truncation)]
    let ordering = integer.cmp(&(whole as i128));
    Some(ordering.then_with(|| 0.0_f64.partial_cmp(&(float - whole)).unwrap_or(Ordering::Equal)))
}

/// Whether a number has no fractional part (`1.0` is an integer to JSON Schema).
pub(super) fn is_integer(number: &Number) -> bool {
    match exact(number) {
        Exact::Integer(_) => true,
        Exact::Float(f) => f.is_finite() && f.fract() == 0.0,
    }
}

/// A non-negative integer keyword value (`minLength: 2`, also written `2.0`).
pub(super) fn as_count(value: &Value) -> Option<u64> {
    let number = value.as_number()?;
    if let Some(u) = number.as_u64() {
        return Some(u);
    }
    let f = number.as_f64()?;
    // Exact for every count that matters; a huge one saturates, which bounds nothing anyway.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (f >= 0.0 && f.fract() == 0.0).then_some(f as u64)
}

/// JSON Schema equality: numbers by value, objects regardless of member order.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Some(Ordering::Equal),
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => objects_equal(a, b),
        _ => false,
    }
}

fn objects_equal(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len() && a.iter().all(|(key, value)| b.get(key).is_some_and(|v| equal(value, v)))
}

/// Whether two items of `items` are equal, in expected linear time: items are bucketed by a
/// hash that agrees with [`equal`] (randomly keyed, so a peer cannot aim for one bucket), and
/// only items in the same bucket are compared.
pub(super) fn has_duplicates(items: &[Value]) -> bool {
    let keys = RandomState::new();
    let mut buckets: HashMap<u64, Vec<&Value>> = HashMap::with_capacity(items.len());
    for item in items {
        let mut hasher = keys.build_hasher();
        hash(item, &keys, &mut hasher);
        let bucket = buckets.entry(hasher.finish()).or_default();
        if bucket.iter().any(|seen| equal(seen, item)) {
            return true;
        }
        bucket.push(item);
    }
    false
}

/// Feeds `value` to `hasher` so that values [`equal`] calls equal hash alike: integral numbers
/// as integers whatever their representation, object members in any order.
fn hash(value: &Value, keys: &RandomState, hasher: &mut impl Hasher) {
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(b) => (1u8, b).hash(hasher),
        Value::Number(n) => match exact(n) {
            Exact::Integer(i) => (2u8, i).hash(hasher),
            Exact::Float(f) if f.fract() == 0.0 && f.abs() < 1e30 => {
                // Exact, as in `compare_integer_float`.
                #[allow(clippy::cast_possible_truncation)]
                (2u8, f as i128).hash(hasher);
            }
            Exact::Float(f) => (3u8, f.to_bits()).hash(hasher),
        },
        Value::String(s) => (4u8, s).hash(hasher),
        Value::Array(items) => {
            (5u8, items.len()).hash(hasher);
            items.iter().for_each(|item| hash(item, keys, hasher));
        }
        Value::Object(map) => {
            // Members hashed alone and summed: the sum does not depend on their order.
            let members = map.iter().fold(0u64, |sum, (key, value)| {
                let mut member = keys.build_hasher();
                key.hash(&mut member);
                hash(value, keys, &mut member);
                sum.wrapping_add(member.finish())
            });
            (6u8, map.len(), members).hash(hasher);
        }
    }
}

/// A number as `digits × 10^exponent`, its absolute value in decimal: `0.1` is exactly one
/// tenth here, so `0.3` is a multiple of `0.1` as the schema's author meant, which binary
/// floating point division gets wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Decimal {
    digits: u128,
    exponent: i32,
}

impl Decimal {
    /// The decimal a JSON number was written as (a float by its shortest round-trip form).
    pub(super) fn of(number: &Number) -> Option<Decimal> {
        let decimal = match exact(number) {
            Exact::Integer(i) => Decimal { digits: i.unsigned_abs(), exponent: 0 },
            Exact::Float(f) if f.is_finite() => Decimal::of_float(f)?,
            Exact::Float(_) => return None,
        };
        Some(decimal.normalized())
    }

    /// From Rust's shortest scientific notation, `d.ddde±x`.
    fn of_float(float: f64) -> Option<Decimal> {
        let text = format!("{:e}", float.abs());
        let (mantissa, exponent) = text.split_once('e')?;
        let exponent: i32 = exponent.parse().ok()?;
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits: u128 = format!("{whole}{fraction}").parse().ok()?;
        let fraction_len = i32::try_from(fraction.len()).ok()?;
        Some(Decimal { digits, exponent: exponent - fraction_len })
    }

    /// Trailing zeros moved into the exponent, so the digits stay as small as they can be.
    fn normalized(mut self) -> Decimal {
        while self.digits != 0 && self.digits % 10 == 0 {
            self.digits /= 10;
            self.exponent += 1;
        }
        self
    }

    pub(super) fn is_zero(self) -> bool {
        self.digits == 0
    }

    /// Whether `self` is an integer multiple of `divisor` (non-zero), exactly.
    pub(super) fn is_multiple_of(self, divisor: Decimal) -> bool {
        if self.digits == 0 {
            return true;
        }
        let shift = i64::from(self.exponent) - i64::from(divisor.exponent);
        if shift >= 0 {
            // self / divisor = (digits × 10^shift) / divisor.digits
            let power = pow_mod(10, shift.unsigned_abs(), divisor.digits);
            mul_mod(self.digits % divisor.digits, power, divisor.digits) == 0
        } else {
            // divisor.digits × 10^-shift must divide self.digits; past 10^38 it exceeds u128,
            // and so any non-zero self.digits.
            let Ok(shift) = u32::try_from(shift.unsigned_abs()) else { return false };
            10u128
                .checked_pow(shift)
                .and_then(|power| power.checked_mul(divisor.digits))
                .is_some_and(|scaled| self.digits % scaled == 0)
        }
    }
}

/// `a × b mod m` without overflow (`a`, `b` < `m`).
fn mul_mod(a: u128, b: u128, m: u128) -> u128 {
    if let Some(product) = a.checked_mul(b) {
        return product % m;
    }
    // Double and add: each step stays below 2m, which fits since m < 2^127 here.
    let (mut result, mut a, mut b) = (0u128, a, b);
    while b > 0 {
        if b & 1 == 1 {
            result = (result + a) % m;
        }
        a = (a << 1) % m;
        b >>= 1;
    }
    result
}

/// `base^exponent mod m` by squaring.
fn pow_mod(base: u128, mut exponent: u64, m: u128) -> u128 {
    let (mut result, mut base) = (1 % m, base % m);
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = mul_mod(result, base, m);
        }
        base = mul_mod(base, base, m);
        exponent >>= 1;
    }
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn number(value: Value) -> Number {
        match value {
            Value::Number(n) => n,
            other => panic!("{other} is not a number"),
        }
    }

    fn multiple(value: Value, of: Value) -> bool {
        let value = Decimal::of(&number(value)).expect("finite");
        let of = Decimal::of(&number(of)).expect("finite");
        value.is_multiple_of(of)
    }

    #[test]
    fn numbers_compare_by_value_across_representations() {
        let cases = [
            (json!(1), json!(1.0), Ordering::Equal),
            (json!(u64::MAX), json!(18446744073709551615.0), Ordering::Less),
            (json!(9007199254740993_u64), json!(9007199254740992.0), Ordering::Greater),
            (json!(-1), json!(-0.5), Ordering::Less),
            (json!(2), json!(1.5), Ordering::Greater),
            (json!(i64::MIN), json!(-1e300), Ordering::Greater),
            (json!(0), json!(-0.0), Ordering::Equal),
            (json!(0.1), json!(0.2), Ordering::Less),
        ];
        for (a, b, expected) in cases {
            assert_eq!(compare(&number(a.clone()), &number(b.clone())), Some(expected), "{a} {b}");
            let reversed = compare(&number(b.clone()), &number(a.clone()));
            assert_eq!(reversed, Some(expected.reverse()), "{b} {a}");
        }
    }

    #[test]
    fn integers_include_integral_floats() {
        assert!(is_integer(&number(json!(1.0))));
        assert!(is_integer(&number(json!(-7))));
        assert!(is_integer(&number(json!(1e300))));
        assert!(!is_integer(&number(json!(1.5))));
    }

    #[test]
    fn counts_accept_integral_floats_only() {
        assert_eq!(as_count(&json!(2)), Some(2));
        assert_eq!(as_count(&json!(2.0)), Some(2));
        assert_eq!(as_count(&json!(2.5)), None);
        assert_eq!(as_count(&json!(-1)), None);
        assert_eq!(as_count(&json!("2")), None);
    }

    #[test]
    fn equality_is_by_value() {
        assert!(equal(&json!([1, {"a": 1.0, "b": [2]}]), &json!([1.0, {"b": [2.0], "a": 1}])));
        assert!(!equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!equal(&json!([1, 2]), &json!([2, 1])));
        assert!(!equal(&json!(false), &json!(0)));
        assert!(!equal(&json!(null), &json!(false)));
        assert!(!equal(&json!("1"), &json!(1)));
    }

    #[test]
    fn duplicates_are_found_across_representations_and_member_orders() {
        assert!(has_duplicates(&[json!(1), json!(2), json!(1.0)]));
        assert!(has_duplicates(&[json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1})]));
        assert!(!has_duplicates(&[json!({"a": 1}), json!({"a": 2}), json!([1]), json!(1)]));
        assert!(!has_duplicates(&[json!(false), json!(0), json!(null), json!("")]));
        let many: Vec<Value> = (0..10_000).map(Value::from).collect();
        assert!(!has_duplicates(&many));
    }

    #[test]
    fn multiples_are_decimal_and_exact() {
        assert!(multiple(json!(0.3), json!(0.1)));
        assert!(multiple(json!(4.5), json!(1.5)));
        assert!(!multiple(json!(35), json!(1.5)));
        assert!(multiple(json!(0.0075), json!(0.0001)));
        assert!(!multiple(json!(0.00751), json!(0.0001)));
        assert!(multiple(json!(10), json!(2)));
        assert!(!multiple(json!(7), json!(2)));
        assert!(multiple(json!(-12), json!(4)));
        assert!(multiple(json!(0), json!(0.7)));
        // Large exponents: no overflow, no float division.
        assert!(multiple(json!(1e300), json!(1e-300)));
        assert!(multiple(json!(1e308), json!(0.5)));
        assert!(!multiple(json!(1e308), json!(0.123456789)));
        assert!(!multiple(json!(1e-300), json!(1e300)));
        assert!(multiple(json!(u64::MAX), json!(u64::MAX)));
        assert!(!multiple(json!(u64::MAX - 1), json!(u64::MAX)));
        assert!(multiple(json!(18446744073709551615_u64), json!(5)));
    }

    #[test]
    fn multiplication_modulo_does_not_overflow() {
        let m = u128::from(u64::MAX) * 3;
        assert_eq!(mul_mod(m - 1, m - 1, m), 1);
        assert_eq!(pow_mod(10, 0, 7), 1);
        assert_eq!(pow_mod(10, 3, 7), 1000 % 7);
    }
}
