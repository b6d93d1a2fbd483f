//! Scripted-client tests of the server session, one scenario per test.

mod deferred;
mod exactly_once;
mod harness;
mod http;
mod http_harness;
mod http_mint;
mod http_modern;
mod http_pair;
mod http_streams;
mod limits;
mod listen;
mod modern;
mod pair;
mod pair_2026;
mod progress_seam;
mod scenarios;
mod stdio;
