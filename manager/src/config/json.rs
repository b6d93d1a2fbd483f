//! An order-preserving JSON value for the configuration parsers.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value that keeps object members in document order (serde_json's `Map` sorts
/// them unless `preserve_order` is enabled, which would affect the whole build).
#[derive(Debug)]
pub(super) enum Json {
    Null,
    Bool(bool),
    /// A non-negative integer that fits `u64`.
    UInt(u64),
    /// Any other number.
    Number,
    String(String),
    Array(Vec<Json>),
    Object(Members),
}

/// Object members in document order, duplicates kept so they can be reported.
#[derive(Debug)]
pub(super) struct Members(pub(super) Vec<(String, Json)>);

impl Members {
    /// The first member named `key`; [`Scope::object`] has already rejected duplicates.
    pub(super) fn get(&self, key: &str) -> Option<&Json> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Like [`get`](Self::get), but `null` counts as absent (for every server field).
    pub(super) fn present(&self, key: &str) -> Option<&Json> {
        self.get(key).filter(|v| !matches!(v, Json::Null))
    }
}

impl Json {
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::UInt(_) | Json::Number => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::UInt(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(u64::try_from(v).map_or(Json::Number, Json::UInt))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Json, E> {
        Ok(Json::Number)
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry::<String, Json>()? {
            members.push(member);
        }
        Ok(Json::Object(Members(members)))
    }
}
