//! The child-process shutdown schedule. Being written.
