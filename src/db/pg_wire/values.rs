//! Values across the PostgreSQL seam: parameters encoded for the types the server declared
//! (integers, floats, text, bytes, NUMERIC from integers, floats or decimal text), first-row
//! values read back, and the text form of both for plain text queries.

use super::super::{Param, Value};
use bytes::BytesMut;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};

/// A parameter encoded for the type the server declared for it.
#[derive(Debug)]
pub(crate) struct PgParam<'a>(pub(crate) Param<'a>);

pub(crate) type BoxError = Box<dyn std::error::Error + Sync + Send>;

/// PostgreSQL's timestamps count microseconds from 2000-01-01, not from 1970.
const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

impl ToSql for PgParam<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        let narrow = |i: i64| -> BoxError { format!("{i} does not fit a {ty} parameter").into() };
        match (self.0, ty) {
            (Param::Null, _) => Ok(IsNull::Yes),
            (Param::Int(i), &Type::INT8) => i.to_sql(ty, out),
            (Param::Int(i), &Type::INT4) => i32::try_from(i).map_err(|_| narrow(i))?.to_sql(ty, out),
            (Param::Int(i), &Type::INT2) => i16::try_from(i).map_err(|_| narrow(i))?.to_sql(ty, out),
            (Param::Int(i), &Type::FLOAT8) => (i as f64).to_sql(ty, out),
            (Param::Int(i), &Type::FLOAT4) => (i as f32).to_sql(ty, out),
            (Param::Int(i), &Type::BOOL) => (i != 0).to_sql(ty, out),
            (Param::Float(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Param::Float(f), &Type::FLOAT4) => (f as f32).to_sql(ty, out),
            (Param::Text(s), _) if <&str as ToSql>::accepts(ty) => s.to_sql(ty, out),
            (Param::Int(i), &Type::NUMERIC) => numeric_binary(&i.to_string(), out),
            (Param::Float(f), &Type::NUMERIC) if f.is_finite() => numeric_binary(&format!("{f}"), out),
            (Param::Text(s), &Type::NUMERIC) => numeric_binary(s, out),
            (Param::Text(s), &Type::BYTEA) => s.as_bytes().to_sql(ty, out),
            (Param::Text(s), &Type::TIMESTAMP | &Type::TIMESTAMPTZ) => {
                let micros = crate::model::parse_sql_timestamp(s)
                    .ok_or_else(|| -> BoxError { format!("{s:?} is not a timestamp (YYYY-MM-DD HH:MM:SS)").into() })?;
                (micros - PG_EPOCH_MICROS).to_sql(&Type::INT8, out)
            }
            (Param::Bytes(b), &Type::BYTEA) => b.to_sql(ty, out),
            (p, _) => Err(format!(
                "a {ty} parameter cannot take {}: cast it in the SQL (e.g. $1::int8 or $1::text)",
                match p {
                    Param::Int(_) => "an integer",
                    Param::Float(_) => "a float",
                    Param::Text(_) => "text",
                    Param::Bytes(_) => "bytes",
                    Param::Null => "NULL",
                }
            )
            .into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true // decided per value in to_sql, with an error that says what to cast
    }

    to_sql_checked!();
}

/// A column read back as a [`Value`].
pub(crate) struct Captured(pub(crate) Value);

impl<'a> FromSql<'a> for Captured {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(Captured(match *ty {
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)? as i64),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)? as i64),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::OID => Value::Int(u32::from_sql(ty, raw)? as i64),
            Type::FLOAT4 => Value::Float(f32::from_sql(ty, raw)? as f64),
            Type::FLOAT8 => Value::Float(f64::from_sql(ty, raw)?),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)? as i64),
            Type::BYTEA => Value::Bytes(raw.to_vec()),
            Type::NUMERIC => Value::Text(numeric_text(raw)?),
            Type::TIMESTAMP | Type::TIMESTAMPTZ => {
                let mut text = String::new();
                crate::model::write_sql_timestamp(i64::from_sql(&Type::INT8, raw)? + PG_EPOCH_MICROS, &mut text);
                Value::Text(text)
            }
            _ if <&str as FromSql>::accepts(ty) => Value::Text(<&str as FromSql>::from_sql(ty, raw)?.to_string()),
            _ => return Err(format!("a {ty} column cannot be read back: cast it in the SQL (::text or ::int8)").into()),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Captured(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// NUMERIC's binary form (base-10000 digit groups) as decimal text.
/// A decimal number (`-12.50`, `7`) in NUMERIC's binary form: base-10000 digits with a
/// weight, a sign and the display scale.
fn numeric_binary(text: &str, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    let t = text.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits_only(int) || !digits_only(frac) {
        return Err(format!("{text:?} is not a decimal number for a numeric parameter").into());
    }
    // Integer digits padded on the left, fraction digits on the right, to groups of four.
    let int_padded = format!("{}{int}", "0".repeat((4 - int.len() % 4) % 4));
    let frac_padded = format!("{frac}{}", "0".repeat((4 - frac.len() % 4) % 4));
    let group = |s: &str| -> Vec<i16> {
        s.as_bytes().chunks(4).map(|c| std::str::from_utf8(c).unwrap_or("0").parse().unwrap_or(0)).collect()
    };
    let int_groups = group(&int_padded);
    let mut groups: Vec<i16> = int_groups.iter().copied().chain(group(&frac_padded)).collect();
    let mut weight = int_groups.len() as i16 - 1;
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    let sign: u16 = if negative && !groups.is_empty() { 0x4000 } else { 0 };
    for word in [groups.len() as i16, weight, sign as i16, frac.len() as i16] {
        out.extend_from_slice(&word.to_be_bytes());
    }
    for g in groups {
        out.extend_from_slice(&g.to_be_bytes());
    }
    Ok(IsNull::No)
}

fn numeric_text(raw: &[u8]) -> Result<String, BoxError> {
    let word = |i: usize| raw.get(i..i + 2).map(|b| i16::from_be_bytes([b[0], b[1]])).ok_or("a NUMERIC cut short");
    let (ndigits, weight, sign, dscale) = (word(0)?, word(2)?, word(4)? as u16, word(6)?);
    if sign == 0xC000 {
        return Ok("NaN".into());
    }
    let digit = |k: i32| -> Result<i16, BoxError> {
        if k < 0 || k >= ndigits as i32 {
            Ok(0)
        } else {
            Ok(word(8 + 2 * k as usize)?)
        }
    };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for k in 0..=weight as i32 {
            let d = digit(k)?;
            if k == 0 {
                s.push_str(&d.to_string());
            } else {
                s.push_str(&format!("{d:04}"));
            }
        }
    }
    if dscale > 0 {
        let mut frac = String::new();
        let mut k = weight as i32 + 1;
        while frac.len() < dscale as usize {
            frac.push_str(&format!("{:04}", digit(k)?));
            k += 1;
        }
        frac.truncate(dscale as usize);
        s.push('.');
        s.push_str(&frac);
    }
    Ok(s)
}

/// A server's text for a value that does not read as its column's type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a {ty} value")]
pub(crate) struct NotOfType {
    pub text: String,
    pub ty: Type,
}

/// A value of the simple query protocol (text) as the value the binary protocol would give,
/// by its column's type: integers, floats, booleans as 0/1, bytea as bytes, text otherwise.
pub(crate) fn text_value(v: Option<&str>, ty: &Type) -> Result<Value, NotOfType> {
    let Some(s) = v else { return Ok(Value::Null) };
    let bad = || NotOfType { text: s.to_string(), ty: ty.clone() };
    Ok(match *ty {
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => Value::Int(s.parse().map_err(|_| bad())?),
        // float4 as the binary protocol reads it: a 32-bit float, widened.
        Type::FLOAT4 => Value::Float(s.parse::<f32>().map_err(|_| bad())? as f64),
        Type::FLOAT8 => Value::Float(s.parse().map_err(|_| bad())?),
        Type::BOOL => match s {
            "t" => Value::Int(1),
            "f" => Value::Int(0),
            _ => return Err(bad()),
        },
        Type::BYTEA => Value::Bytes(bytea_text(s).ok_or_else(bad)?),
        _ => Value::Text(s.to_string()),
    })
}

/// bytea's text output: hex (`\x0001ff`, the default) or the older escape format.
pub(crate) fn bytea_text(s: &str) -> Option<Vec<u8>> {
    if let Some(h) = s.strip_prefix("\\x") {
        let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        let h = h.as_bytes();
        if h.len() % 2 != 0 {
            return None;
        }
        return h.chunks(2).map(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            let oct = std::str::from_utf8(b.get(i + 1..i + 4)?).ok()?;
            out.push(u8::from_str_radix(oct, 8).ok()?);
            i += 4;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_values_are_typed_by_their_columns() {
        use super::{text_value, Type, Value};
        assert_eq!(text_value(Some("-1099511627776"), &Type::INT8), Ok(Value::Int(-(1 << 40))));
        assert_eq!(text_value(Some("2.5"), &Type::FLOAT8), Ok(Value::Float(2.5)));
        assert_eq!(text_value(Some("0.1"), &Type::FLOAT4), Ok(Value::Float(0.1f32 as f64)));
        assert!(matches!(text_value(Some("NaN"), &Type::FLOAT8), Ok(Value::Float(f)) if f.is_nan()));
        assert_eq!(text_value(Some("-Infinity"), &Type::FLOAT8), Ok(Value::Float(f64::NEG_INFINITY)));
        assert_eq!(text_value(Some("t"), &Type::BOOL), Ok(Value::Int(1)));
        assert_eq!(text_value(Some("\\x0001ff"), &Type::BYTEA), Ok(Value::Bytes(vec![0, 1, 255])));
        assert_eq!(text_value(Some("a\\\\\\001"), &Type::BYTEA), Ok(Value::Bytes(vec![b'a', b'\\', 1])));
        assert_eq!(text_value(Some("12.50"), &Type::NUMERIC), Ok(Value::Text("12.50".into())));
        assert_eq!(text_value(None, &Type::INT4), Ok(Value::Null));
        assert_eq!(text_value(Some("1.5"), &Type::INT4).unwrap_err().to_string(), "\"1.5\" is not a int4 value");
        assert!(text_value(Some("\\x0"), &Type::BYTEA).is_err());
    }

    /// Decimal text to NUMERIC's binary form and back reads the same number.
    #[test]
    fn numerics_round_trip() {
        for (given, read) in [
            ("0", "0"),
            ("7", "7"),
            ("-12.50", "-12.50"),
            ("123456789.0001", "123456789.0001"),
            ("0.00042", "0.00042"),
            ("10000", "10000"),
            ("-0.5", "-0.5"),
        ] {
            let mut out = bytes::BytesMut::new();
            super::numeric_binary(given, &mut out).unwrap();
            assert_eq!(super::numeric_text(&out).unwrap(), read, "{given}");
        }
        for bad in ["", "1e5", "12a", "--1", "."] {
            assert!(super::numeric_binary(bad, &mut bytes::BytesMut::new()).is_err(), "{bad:?}");
        }
    }
}
