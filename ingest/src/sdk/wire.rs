//! The SDK payload's wire types, read with simd-json's serde deserializer: strings borrow from
//! the (in place unescaped) body, and no document tree is built.
//!
//! Every field is lenient: a value of an unexpected kind is kept as what it is (`Scalar`,
//! `Obj::Other`, `List::Other`) rather than failing the deserialization, so that one bad record
//! is reported by itself instead of failing the batch. Unknown keys are skipped.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A JSON value of any kind; strings and numbers kept, containers only named.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) enum Scalar<'a> {
    /// Missing or `null`.
    #[default]
    Null,
    Str(Cow<'a, str>),
    Num(f64),
    Bool(bool),
    Object,
    Array,
}

impl Scalar<'_> {
    /// A non-blank string.
    pub(super) fn str(&self) -> Option<&str> {
        match self {
            Scalar::Str(s) => Some(s.trim()).filter(|s| !s.is_empty()),
            _ => None,
        }
    }

    /// A finite number, or a string holding one.
    pub(super) fn number(&self) -> Option<f64> {
        let n = match self {
            Scalar::Num(n) => *n,
            Scalar::Str(s) => s.trim().parse().ok()?,
            _ => return None,
        };
        n.is_finite().then_some(n)
    }

    pub(super) fn is_null(&self) -> bool {
        matches!(self, Scalar::Null)
    }

    /// A short rendering for reports.
    pub(super) fn example(&self) -> Option<String> {
        Some(match self {
            Scalar::Null => return None,
            Scalar::Str(s) => s.chars().take(80).collect(),
            Scalar::Num(n) => n.to_string(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Object => "an object".into(),
            Scalar::Array => "an array".into(),
        })
    }
}

struct ScalarVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ScalarVisitor<'a> {
    type Value = Scalar<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Num(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Num(v as f64))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Object)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Array)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor(PhantomData))
    }
}

/// An object read as `T`, or whatever else stood there.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) enum Obj<T> {
    #[default]
    Null,
    Value(T),
    /// Not an object: what it was, for reports.
    Other(String),
}

impl<T> Obj<T> {
    pub(super) fn value(&self) -> Option<&T> {
        match self {
            Obj::Value(v) => Some(v),
            _ => None,
        }
    }
}

struct ObjVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
    type Value = Obj<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Obj::Value)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Obj::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Obj::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        ScalarVisitor(PhantomData)
            .visit_seq(seq)
            .map(|s| Obj::Other(s.example().unwrap_or_default()))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Obj::Other(v.chars().take(80).collect()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Obj::Other(v.chars().take(80).collect()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Obj::Other(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Obj::Other(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Obj::Other(v.to_string()))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Obj::Other(v.to_string()))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjVisitor(PhantomData))
    }
}

/// An array of `T`, or whatever else stood there.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum List<T> {
    Items(Vec<T>),
    /// Not an array (`null` and missing are an empty list).
    Other,
}

impl<T> Default for List<T> {
    fn default() -> Self {
        List::Items(Vec::new())
    }
}

impl<T> List<T> {
    pub(super) fn items(&self) -> &[T] {
        match self {
            List::Items(v) => v,
            List::Other => &[],
        }
    }
}

struct ListVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
    type Value = List<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(List::Items(items))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(List::default())
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(List::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        ScalarVisitor(PhantomData).visit_map(map).map(|_| List::Other)
    }
    fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Self::Value, E> {
        Ok(List::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(List::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(List::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(List::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(List::Other)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(List::Other)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListVisitor(PhantomData))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Envelope<'a> {
    #[serde(borrow)]
    pub provider: Scalar<'a>,
    #[serde(borrow)]
    pub data: Obj<Data<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Data<'a> {
    #[serde(borrow)]
    pub records: List<Obj<RecordIn<'a>>>,
    #[serde(borrow)]
    pub sleep: List<Obj<SleepIn<'a>>>,
    #[serde(borrow)]
    pub workouts: List<Obj<WorkoutIn<'a>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct RecordIn<'a> {
    #[serde(borrow, rename = "type")]
    pub kind: Scalar<'a>,
    #[serde(borrow, alias = "start_date")]
    pub start_date: Scalar<'a>,
    #[serde(borrow, alias = "zone_offset")]
    pub zone_offset: Scalar<'a>,
    #[serde(borrow)]
    pub value: Scalar<'a>,
    #[serde(borrow)]
    pub unit: Scalar<'a>,
    #[serde(borrow)]
    pub source: Obj<SourceIn<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct SourceIn<'a> {
    #[serde(borrow, alias = "app_id")]
    pub app_id: Scalar<'a>,
    #[serde(borrow)]
    pub name: Scalar<'a>,
    #[serde(borrow, alias = "bundle_identifier")]
    pub bundle_identifier: Scalar<'a>,
    #[serde(borrow, alias = "device_name")]
    pub device_name: Scalar<'a>,
    #[serde(borrow, alias = "device_manufacturer")]
    pub device_manufacturer: Scalar<'a>,
    #[serde(borrow, alias = "device_model")]
    pub device_model: Scalar<'a>,
    #[serde(borrow, alias = "product_type")]
    pub product_type: Scalar<'a>,
    #[serde(borrow, alias = "device_type")]
    pub device_type: Scalar<'a>,
    #[serde(borrow, alias = "device_software_version")]
    pub device_software_version: Scalar<'a>,
    #[serde(borrow, alias = "operating_system_version")]
    pub operating_system_version: Obj<OsVersion<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct OsVersion<'a> {
    #[serde(borrow)]
    pub major_version: Scalar<'a>,
    #[serde(borrow)]
    pub minor_version: Scalar<'a>,
    #[serde(borrow)]
    pub patch_version: Scalar<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct SleepIn<'a> {
    #[serde(borrow)]
    pub id: Scalar<'a>,
    #[serde(borrow, alias = "parent_id")]
    pub parent_id: Scalar<'a>,
    #[serde(borrow)]
    pub stage: Scalar<'a>,
    #[serde(borrow, alias = "start_date")]
    pub start_date: Scalar<'a>,
    #[serde(borrow, alias = "end_date")]
    pub end_date: Scalar<'a>,
    #[serde(borrow, alias = "zone_offset")]
    pub zone_offset: Scalar<'a>,
    #[serde(borrow)]
    pub source: Obj<SourceIn<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct WorkoutIn<'a> {
    #[serde(borrow)]
    pub id: Scalar<'a>,
    #[serde(borrow, rename = "type")]
    pub kind: Scalar<'a>,
    #[serde(borrow, alias = "start_date")]
    pub start_date: Scalar<'a>,
    #[serde(borrow, alias = "end_date")]
    pub end_date: Scalar<'a>,
    #[serde(borrow, alias = "zone_offset")]
    pub zone_offset: Scalar<'a>,
    #[serde(borrow)]
    pub notes: Scalar<'a>,
    #[serde(borrow)]
    pub source: Obj<SourceIn<'a>>,
    #[serde(borrow)]
    pub values: List<Obj<StatIn<'a>>>,
    #[serde(borrow)]
    pub samples: List<Obj<WorkoutSampleIn<'a>>>,
    #[serde(borrow)]
    pub route: List<Obj<RoutePointIn<'a>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct StatIn<'a> {
    #[serde(borrow, rename = "type")]
    pub kind: Scalar<'a>,
    #[serde(borrow)]
    pub value: Scalar<'a>,
    #[serde(borrow)]
    pub unit: Scalar<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct WorkoutSampleIn<'a> {
    #[serde(borrow)]
    pub timestamp: Scalar<'a>,
    #[serde(borrow, rename = "type")]
    pub kind: Scalar<'a>,
    #[serde(borrow)]
    pub value: Scalar<'a>,
    #[serde(borrow)]
    pub unit: Scalar<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct RoutePointIn<'a> {
    #[serde(borrow)]
    pub timestamp: Scalar<'a>,
    #[serde(borrow)]
    pub latitude: Scalar<'a>,
    #[serde(borrow)]
    pub longitude: Scalar<'a>,
    #[serde(borrow, alias = "altitude_m")]
    pub altitude_m: Scalar<'a>,
    #[serde(borrow, alias = "horizontal_accuracy_m")]
    pub horizontal_accuracy_m: Scalar<'a>,
}
