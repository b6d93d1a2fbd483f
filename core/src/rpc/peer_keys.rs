//! Maps keyed by what the peer chose: its request ids and progress tokens, the session ids
//! it sends back. A client picks those keys, so their hasher must be seeded with a secret it
//! cannot learn (or it could pick keys that all collide); std's SipHash is, but costs several
//! times foldhash on the short keys of a call. [`PeerMap`] hashes with foldhash under seeds
//! drawn from std's [`RandomState`] (the OS's randomness): one seed shared by the process,
//! one more per map.
//!
//! Keys the session makes itself (counters) use `CounterMap` instead, which is cheaper still
//! and must never hold a peer's key.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use foldhash::SharedSeed;
use foldhash::fast::{FoldHasher, SeedableRandomState};

/// The hasher of a [`PeerMap`]: foldhash, randomly seeded per process and per map.
#[derive(Clone, Debug)]
pub(crate) struct PeerKeys(SeedableRandomState);

impl Default for PeerKeys {
    fn default() -> Self {
        static SHARED: OnceLock<SharedSeed> = OnceLock::new();
        let shared = SHARED.get_or_init(|| SharedSeed::from_u64(RandomState::new().hash_one(0u8)));
        // A fresh `RandomState` has keys no other map has (std increments its per-thread keys).
        let per_map = RandomState::new().hash_one(1u8);
        PeerKeys(SeedableRandomState::with_seed(per_map, shared))
    }
}

impl BuildHasher for PeerKeys {
    type Hasher = FoldHasher<'static>;

    fn build_hasher(&self) -> Self::Hasher {
        self.0.build_hasher()
    }
}

/// A map keyed by values the peer chose (see the [module docs](self)).
pub(crate) type PeerMap<K, V> = HashMap<K, V, PeerKeys>;

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::hash::BuildHasher;

    use proptest::prelude::*;

    use super::{PeerKeys, PeerMap};
    use crate::jsonrpc::Id;

    /// Two maps never share a seed: what a client learns of one map's order says nothing of
    /// another's.
    #[test]
    fn each_map_has_its_own_seed() {
        let (a, b) = (PeerKeys::default(), PeerKeys::default());
        let key = Id::String("same key".into());
        assert_ne!(a.hash_one(&key), b.hash_one(&key));
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(Id, u64),
        Remove(Id),
    }

    fn id() -> impl Strategy<Value = Id> {
        prop_oneof![
            (0u64..20).prop_map(|n| Id::Number(n.into())),
            "[a-c]{0,3}".prop_map(Id::String),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (id(), any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
            id().prop_map(Op::Remove),
        ]
    }

    proptest! {
        /// A peer map holds what a std map (SipHash) holds after any run of inserts and
        /// removes: the hasher changes the cost, never the contents.
        #[test]
        fn holds_what_a_std_map_holds(ops in proptest::collection::vec(op(), 0..64)) {
            let mut peer: PeerMap<Id, u64> = PeerMap::default();
            let mut reference: HashMap<Id, u64> = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        prop_assert_eq!(peer.insert(k.clone(), v), reference.insert(k, v));
                    }
                    Op::Remove(k) => prop_assert_eq!(peer.remove(&k), reference.remove(&k)),
                }
                prop_assert_eq!(peer.len(), reference.len());
            }
            for (k, v) in &reference {
                prop_assert_eq!(peer.get(k), Some(v));
            }
        }
    }
}
