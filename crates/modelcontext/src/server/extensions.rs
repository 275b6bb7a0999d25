//! What a transport knows about a connection that the protocol does not carry: the
//! authenticated principal, HTTP headers, a peer address. Handlers read it with
//! [`Context::extension`](super::Context::extension).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Typed values a transport attaches to a connection (or, on modern HTTP, to one request),
/// one per type. Cheap to clone.
#[derive(Clone, Default)]
pub struct Extensions {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>, BuildHasherDefault<TypeIdHasher>>,
}

/// Hashes a `TypeId` as the value it already is: a type's id is a hash, and the keys are
/// types of this program, not input a peer chooses, so SipHash would only cost time on every
/// lookup a request makes.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // `TypeId` writes one `u64`; anything else is folded in, so hashing stays correct.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 ^= value;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Extensions({} values)", self.values.len())
    }
}

impl Extensions {
    /// No values.
    pub fn new() -> Extensions {
        Extensions::default()
    }

    /// Adds `value`, replacing any earlier value of its type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if there is one.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        let value: &(dyn Any + Send + Sync) = &**self.values.get(&TypeId::of::<T>())?;
        value.downcast_ref::<T>()
    }
}

/// A stable name for whom the transport authenticated (an OAuth subject and client, a client
/// certificate's name...). When present it is bound into MRTR `requestState`, so one
/// principal's state cannot be replayed by another (spec SEP-2322: SHOULD bind the
/// principal), and HTTP binds a handshake-era session to it. With the `auth` feature the
/// verified token's full `auth::Principal` travels beside it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrincipalId(pub String);
