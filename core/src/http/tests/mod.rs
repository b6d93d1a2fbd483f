//! HTTP connection scenarios.
