//! The modern result stamp: `resultType`, `serverInfo`, caching hints.

use std::sync::Arc;

use modelcontext_types::{
    CallToolResult, CompleteResult, DiscoverResult, EmptyResult, Era, GetPromptResult,
    GetSkillResult, Implementation, InputRequiredResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult, McpError,
    Meta, MrtrResult, RawValue, ReadDirectoryResult, ReadResourceResult, ResultType,
    SERVER_INFO_META_KEY, to_raw,
};
use serde::Serialize;
use serde_json::Value;

use super::CacheHint;
use crate::engine::Outcome;

/// `serverInfo`, serialized once per server: the `_meta` object written into every modern
/// result that has no `_meta` of its own (nearly all), and the value merged into the
/// `_meta` of one that has. Cloning and serializing it per result was a sixth of a modern
/// call's instructions.
pub(crate) struct ServerInfoJson {
    value: Value,
    /// `{"io.modelcontextprotocol/serverInfo": value}`, as written.
    meta: Box<RawValue>,
}

impl ServerInfoJson {
    pub(crate) fn new(info: &Implementation) -> ServerInfoJson {
        let value = serde_json::to_value(info).unwrap_or_default();
        let mut meta = Meta::new();
        meta.insert(SERVER_INFO_META_KEY.into(), value.clone());
        // A map of strings always serializes; the fallback keeps the stamp valid JSON.
        let meta = to_raw(&meta).unwrap_or_else(|_| empty_object());
        ServerInfoJson { value, meta }
    }
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("`{}` is JSON")
}

/// What the modern era adds to every result: `resultType`, the `serverInfo` stamp, and the
/// caching hints on cacheable results (spec 2026-07-28, SEP-2549: `ttlMs: 0`, private by
/// default; the server's [`CacheHint`]s where it set them). The handshake era gets none of
/// them.
pub(super) struct Stamp {
    server_info: Option<Arc<ServerInfoJson>>,
    /// The caching hint of a cacheable result, when the server set one.
    hint: Option<CacheHint>,
}

impl Stamp {
    pub(super) fn new(server_info: &Arc<ServerInfoJson>, era: Era) -> Stamp {
        Stamp { server_info: (era == Era::Modern).then(|| Arc::clone(server_info)), hint: None }
    }

    /// Stamps cacheable results with `hint` instead of the default (modern era only).
    pub(super) fn with_hint(mut self, hint: CacheHint) -> Stamp {
        self.hint = Some(hint);
        self
    }

    pub(super) fn apply<R: WireResult>(&self, mut result: R) -> Outcome {
        let Some(info) = &self.server_info else { return to_raw(&result).map_err(internal) };
        if let Some(hint) = &self.hint {
            result.hint(hint);
        }
        result.stamp();
        match result.meta_mut() {
            // The usual case: the pre-serialized `_meta` is written as the first member.
            Some(None) => {
                to_raw(&MetaFirst { result: &result, meta: &info.meta }).map_err(internal)
            }
            Some(Some(meta)) => {
                meta.insert(SERVER_INFO_META_KEY.into(), info.value.clone());
                to_raw(&result).map_err(internal)
            }
            None => to_raw(&result).map_err(internal),
        }
    }
}

pub(super) fn internal(err: serde_json::Error) -> McpError {
    McpError::internal(format!("result did not serialize: {err}"))
}

/// `result` with `meta` written as its `_meta` member, first, as the result's own `_meta`
/// field would be (every result type declares it first).
struct MetaFirst<'a, R> {
    result: &'a R,
    meta: &'a RawValue,
}

impl<R: Serialize> Serialize for MetaFirst<'_, R> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.result.serialize(meta_first::Prepend { inner: serializer, meta: self.meta })
    }
}

/// A result type with the shared result fields.
pub(super) trait WireResult: Serialize + Send {
    /// Sets `resultType`, and the default caching hints of a cacheable result.
    fn stamp(&mut self);

    /// The result's `_meta`, where `serverInfo` goes; `None` for a result kind without one.
    fn meta_mut(&mut self) -> Option<&mut Option<Meta>>;

    /// Sets the caching hint; only cacheable results have one.
    fn hint(&mut self, _hint: &CacheHint) {}
}

/// Implements [`WireResult`] for a cacheable result type (`resultType`, `ttlMs`, `cacheScope`
/// and `_meta` fields).
macro_rules! cacheable_result {
    ($ty:ty) => {
        impl $crate::server::stamp::WireResult for $ty {
            fn stamp(&mut self) {
                self.result_type = Some(modelcontext_types::ResultType::Complete);
                self.ttl_ms.get_or_insert(0);
                self.cache_scope.get_or_insert(modelcontext_types::CacheScope::Private);
            }

            fn meta_mut(&mut self) -> Option<&mut Option<modelcontext_types::Meta>> {
                Some(&mut self.meta)
            }

            fn hint(&mut self, hint: &$crate::server::CacheHint) {
                self.ttl_ms = Some(hint.ttl_ms());
                self.cache_scope = Some(hint.scope);
            }
        }
    };
}
pub(super) use cacheable_result;

macro_rules! wire_result {
    (plain: $($ty:ty),*) => {$(
        impl WireResult for $ty {
            fn stamp(&mut self) {
                self.result_type = Some(ResultType::Complete);
            }

            fn meta_mut(&mut self) -> Option<&mut Option<Meta>> {
                Some(&mut self.meta)
            }
        }
    )*};
    (cacheable: $($ty:ty),*) => {$( cacheable_result!($ty); )*};
}

impl WireResult for InputRequiredResult {
    fn stamp(&mut self) {
        self.result_type = Some(ResultType::InputRequired);
    }

    fn meta_mut(&mut self) -> Option<&mut Option<Meta>> {
        Some(&mut self.meta)
    }
}

impl<T: WireResult> WireResult for MrtrResult<T> {
    fn hint(&mut self, hint: &CacheHint) {
        // An `input_required` round is never cached (spec: results tied to input responses
        // must not be).
        if let MrtrResult::Complete(result) = self {
            result.hint(hint);
        }
    }

    fn stamp(&mut self) {
        match self {
            MrtrResult::Complete(result) => result.stamp(),
            MrtrResult::InputRequired(result) => result.stamp(),
            // A result kind a later revision adds carries its own `resultType`: left as is.
            _ => {}
        }
    }

    fn meta_mut(&mut self) -> Option<&mut Option<Meta>> {
        match self {
            MrtrResult::Complete(result) => result.meta_mut(),
            MrtrResult::InputRequired(result) => result.meta_mut(),
            _ => None,
        }
    }
}

wire_result!(plain: EmptyResult, CallToolResult, GetPromptResult, CompleteResult, ReadDirectoryResult);
wire_result!(cacheable: DiscoverResult, ListToolsResult, ListResourcesResult, ListResourceTemplatesResult, ListPromptsResult, ReadResourceResult, ListSkillsResult, GetSkillResult);

/// A serializer that writes one more member first into the object it is given: the result's
/// struct (or map) gets `_meta` before its own fields. Everything else passes through.
mod meta_first {
    use modelcontext_types::RawValue;
    use serde::Serialize;
    use serde::ser::{SerializeMap, SerializeStruct, Serializer};

    pub(super) struct Prepend<'a, S> {
        pub inner: S,
        pub meta: &'a RawValue,
    }

    /// Methods that only pass through (a result is always an object; these never run).
    macro_rules! pass {
        ($($method:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {$(
            fn $method(self, $($arg: $ty),*) -> Result<$out, S::Error> {
                self.inner.$method($($arg),*)
            }
        )*};
    }

    impl<'a, S: Serializer> Serializer for Prepend<'a, S> {
        type Ok = S::Ok;
        type Error = S::Error;
        type SerializeSeq = S::SerializeSeq;
        type SerializeTuple = S::SerializeTuple;
        type SerializeTupleStruct = S::SerializeTupleStruct;
        type SerializeTupleVariant = S::SerializeTupleVariant;
        type SerializeMap = S::SerializeMap;
        type SerializeStruct = S::SerializeStruct;
        type SerializeStructVariant = S::SerializeStructVariant;

        fn serialize_struct(
            self,
            name: &'static str,
            len: usize,
        ) -> Result<S::SerializeStruct, S::Error> {
            let mut object = self.inner.serialize_struct(name, len + 1)?;
            object.serialize_field("_meta", self.meta)?;
            Ok(object)
        }

        fn serialize_map(self, len: Option<usize>) -> Result<S::SerializeMap, S::Error> {
            let mut object = self.inner.serialize_map(len.map(|len| len + 1))?;
            object.serialize_entry("_meta", self.meta)?;
            Ok(object)
        }

        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            _name: &'static str,
            value: &T,
        ) -> Result<S::Ok, S::Error> {
            value.serialize(self)
        }

        fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
            value.serialize(self)
        }

        fn is_human_readable(&self) -> bool {
            self.inner.is_human_readable()
        }

        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            name: &'static str,
            index: u32,
            variant: &'static str,
            value: &T,
        ) -> Result<S::Ok, S::Error> {
            self.inner.serialize_newtype_variant(name, index, variant, value)
        }

        pass! {
            serialize_bool(v: bool) -> S::Ok;
            serialize_i8(v: i8) -> S::Ok;
            serialize_i16(v: i16) -> S::Ok;
            serialize_i32(v: i32) -> S::Ok;
            serialize_i64(v: i64) -> S::Ok;
            serialize_u8(v: u8) -> S::Ok;
            serialize_u16(v: u16) -> S::Ok;
            serialize_u32(v: u32) -> S::Ok;
            serialize_u64(v: u64) -> S::Ok;
            serialize_f32(v: f32) -> S::Ok;
            serialize_f64(v: f64) -> S::Ok;
            serialize_char(v: char) -> S::Ok;
            serialize_str(v: &str) -> S::Ok;
            serialize_bytes(v: &[u8]) -> S::Ok;
            serialize_none() -> S::Ok;
            serialize_unit() -> S::Ok;
            serialize_unit_struct(name: &'static str) -> S::Ok;
            serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> S::Ok;
            serialize_seq(len: Option<usize>) -> S::SerializeSeq;
            serialize_tuple(len: usize) -> S::SerializeTuple;
            serialize_tuple_struct(name: &'static str, len: usize) -> S::SerializeTupleStruct;
            serialize_tuple_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeTupleVariant;
            serialize_struct_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeStructVariant;
        }
    }
}

#[cfg(test)]
mod tests {
    use modelcontext_types::{CallToolResult, Era, Implementation, Meta, SERVER_INFO_META_KEY};
    use serde_json::json;

    use super::{ServerInfoJson, Stamp, WireResult};

    fn stamp() -> Stamp {
        let info = ServerInfoJson::new(&Implementation::new("s", "1"));
        Stamp::new(&std::sync::Arc::new(info), Era::Modern)
    }

    /// The pre-serialized `_meta` is written exactly where the result's own `_meta` field
    /// would be, with the same bytes as a `serverInfo` inserted into it.
    #[test]
    fn a_spliced_server_info_writes_the_bytes_of_an_inserted_one() {
        let result = CallToolResult::text("3");
        let stamped = stamp().apply(result.clone()).expect("serializes");
        let mut expected = result;
        expected.stamp();
        let mut meta = Meta::new();
        meta.insert(SERVER_INFO_META_KEY.into(), json!({"name": "s", "version": "1"}));
        expected.meta = Some(meta);
        assert_eq!(stamped.get(), serde_json::to_string(&expected).expect("json"));
    }

    /// A result with its own `_meta` keeps it, with `serverInfo` added.
    #[test]
    fn a_result_with_its_own_meta_gets_server_info_beside_it() {
        let mut meta = Meta::new();
        meta.insert("k".into(), json!(1));
        let mut result = CallToolResult::text("3");
        result.meta = Some(meta);
        let stamped = stamp().apply(result).expect("serializes");
        let value: serde_json::Value = serde_json::from_str(stamped.get()).expect("json");
        assert_eq!(value["_meta"]["k"], 1);
        assert_eq!(value["_meta"][SERVER_INFO_META_KEY]["name"], "s");
        assert_eq!(value["resultType"], "complete");
    }
}
