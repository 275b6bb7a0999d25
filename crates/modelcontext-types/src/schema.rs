//! The primitive field schemas of a form-mode elicitation (`PrimitiveSchemaDefinition`).
//!
//! Each struct writes its own `"type"`; [`PrimitiveSchemaDefinition`] picks the struct from
//! `type` and the keys present (`oneOf`, `enum`, `enumNames`, `items.anyOf`), never by trial.

use serde::de::Error as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One field of an elicitation form.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PrimitiveSchemaDefinition {
    /// Free text.
    String(StringSchema),
    /// A number or an integer.
    Number(NumberSchema),
    /// A checkbox.
    Boolean(BooleanSchema),
    /// One of some strings (`enum`).
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// One of some titled options (`oneOf`).
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Several of some strings (`items.enum`).
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Several of some titled options (`items.anyOf`).
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// One of some strings with display names in `enumNames` (legacy).
    LegacyTitled(LegacyTitledEnumSchema),
}

impl Serialize for PrimitiveSchemaDefinition {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PrimitiveSchemaDefinition::String(x) => x.serialize(s),
            PrimitiveSchemaDefinition::Number(x) => x.serialize(s),
            PrimitiveSchemaDefinition::Boolean(x) => x.serialize(s),
            PrimitiveSchemaDefinition::UntitledSingleSelect(x) => x.serialize(s),
            PrimitiveSchemaDefinition::TitledSingleSelect(x) => x.serialize(s),
            PrimitiveSchemaDefinition::UntitledMultiSelect(x) => x.serialize(s),
            PrimitiveSchemaDefinition::TitledMultiSelect(x) => x.serialize(s),
            PrimitiveSchemaDefinition::LegacyTitled(x) => x.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use PrimitiveSchemaDefinition as P;
        let v = Value::deserialize(d)?;
        let has = |key: &str| v.get(key).is_some();
        let parsed = match v.get("type").and_then(Value::as_str) {
            Some("string") if has("oneOf") => serde_json::from_value(v).map(P::TitledSingleSelect),
            Some("string") if has("enumNames") => serde_json::from_value(v).map(P::LegacyTitled),
            Some("string") if has("enum") => serde_json::from_value(v).map(P::UntitledSingleSelect),
            Some("string") => serde_json::from_value(v).map(P::String),
            Some("number" | "integer") => serde_json::from_value(v).map(P::Number),
            Some("boolean") => serde_json::from_value(v).map(P::Boolean),
            Some("array") if v.pointer("/items/anyOf").is_some() => {
                serde_json::from_value(v).map(P::TitledMultiSelect)
            }
            Some("array") => serde_json::from_value(v).map(P::UntitledMultiSelect),
            Some(other) => return Err(D::Error::custom(format!("unknown field type `{other}`"))),
            None => return Err(D::Error::custom("a field schema needs a string `type`")),
        };
        parsed.map_err(D::Error::custom)
    }
}

/// The `format` of a [`StringSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum StringFormat {
    /// An email address.
    #[serde(rename = "email")]
    Email,
    /// A URI.
    #[serde(rename = "uri")]
    Uri,
    /// A calendar date.
    #[serde(rename = "date")]
    Date,
    /// A date and time.
    #[serde(rename = "date-time")]
    DateTime,
}

/// A text field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Shortest allowed length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Longest allowed length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Expected format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Pre-filled value (2025-11-25+, SEP-1034).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

setters!(StringSchema {
    with_min_length => min_length: u64,
    with_max_length => max_length: u64,
    with_format => format: StringFormat,
});

/// `"number"` or `"integer"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// Any number.
    #[default]
    Number,
    /// Whole numbers only.
    Integer,
}

/// A numeric field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    #[serde(rename = "type")]
    pub kind: NumberType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Smallest allowed value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::num::opt_f64"
    )]
    pub minimum: Option<f64>,
    /// Largest allowed value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::num::opt_f64"
    )]
    pub maximum: Option<f64>,
    /// Pre-filled value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::num::opt_f64"
    )]
    pub default: Option<f64>,
}

impl NumberSchema {
    /// A field of numbers or of integers.
    pub fn new(kind: NumberType) -> NumberSchema {
        NumberSchema { kind, ..NumberSchema::default() }
    }
}

setters!(NumberSchema {
    with_minimum => minimum: f64,
    with_maximum => maximum: f64,
    with_default => default: f64,
});

/// A checkbox.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "boolean", rename_all = "camelCase")]
#[non_exhaustive]
pub struct BooleanSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

setters!(BooleanSchema { with_default => default: bool });

/// A titled option: the value sent and the label shown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The label.
    pub title: String,
}

impl EnumOption {
    /// The option `value`, shown as `title`.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> EnumOption {
        EnumOption { value: value.into(), title: title.into() }
    }
}

/// A single choice among strings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledSingleSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl UntitledSingleSelectEnumSchema {
    /// One of `values`.
    pub fn new(values: Vec<String>) -> UntitledSingleSelectEnumSchema {
        UntitledSingleSelectEnumSchema { values, ..UntitledSingleSelectEnumSchema::default() }
    }
}

/// A single choice among titled options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledSingleSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub one_of: Vec<EnumOption>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl TitledSingleSelectEnumSchema {
    /// One of the options `one_of`.
    pub fn new(one_of: Vec<EnumOption>) -> TitledSingleSelectEnumSchema {
        TitledSingleSelectEnumSchema { one_of, ..TitledSingleSelectEnumSchema::default() }
    }
}

/// A single choice among strings, labelled by the parallel `enumNames` (legacy form).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
#[non_exhaustive]
pub struct LegacyTitledEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Display names, parallel to `enum`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl LegacyTitledEnumSchema {
    /// One of `values`, unlabelled until [`LegacyTitledEnumSchema::with_enum_names`].
    pub fn new(values: Vec<String>) -> LegacyTitledEnumSchema {
        LegacyTitledEnumSchema { values, ..LegacyTitledEnumSchema::default() }
    }
}

setters!(LegacyTitledEnumSchema { with_enum_names => enum_names: Vec<String> });

// The single-choice and text fields pre-fill a string.
setters!(StringSchema, UntitledSingleSelectEnumSchema, TitledSingleSelectEnumSchema,
    LegacyTitledEnumSchema { with_default => default: String });

/// The `items` of an [`UntitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string")]
#[non_exhaustive]
pub struct UntitledEnumItems {
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
}

impl UntitledEnumItems {
    /// The choices `values`.
    pub fn new(values: Vec<String>) -> UntitledEnumItems {
        UntitledEnumItems { values }
    }
}

/// The `items` of a [`TitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledEnumItems {
    /// The choices.
    pub any_of: Vec<EnumOption>,
}

impl TitledEnumItems {
    /// The options `any_of`.
    pub fn new(any_of: Vec<EnumOption>) -> TitledEnumItems {
        TitledEnumItems { any_of }
    }
}

/// Several choices among strings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "array", rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledMultiSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: UntitledEnumItems,
    /// Pre-selected values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

impl UntitledMultiSelectEnumSchema {
    /// Several of `items`.
    pub fn new(items: UntitledEnumItems) -> UntitledMultiSelectEnumSchema {
        UntitledMultiSelectEnumSchema { items, ..UntitledMultiSelectEnumSchema::default() }
    }
}

/// Several choices among titled options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "array", rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledMultiSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: TitledEnumItems,
    /// Pre-selected values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

impl TitledMultiSelectEnumSchema {
    /// Several of `items`.
    pub fn new(items: TitledEnumItems) -> TitledMultiSelectEnumSchema {
        TitledMultiSelectEnumSchema { items, ..TitledMultiSelectEnumSchema::default() }
    }
}

setters!(UntitledMultiSelectEnumSchema, TitledMultiSelectEnumSchema {
    with_min_items => min_items: u64,
    with_max_items => max_items: u64,
    with_default => default: Vec<String>,
});

// Every field has a label and help text.
setters!(StringSchema, NumberSchema, BooleanSchema, UntitledSingleSelectEnumSchema,
    TitledSingleSelectEnumSchema, LegacyTitledEnumSchema, UntitledMultiSelectEnumSchema,
    TitledMultiSelectEnumSchema {
    with_title => title: String,
    with_description => description: String,
});
