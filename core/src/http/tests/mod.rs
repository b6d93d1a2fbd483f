//! Deterministic HTTP connection scenarios: a virtual clock and a scripted server, one
//! scenario per test, plus a proptest over arbitrary response sequences.

use url::Url;

use super::*;
use crate::http::headers::HeaderList;
use crate::session::{self, RawResult, RequestError, RequestHandle, RequestOptions, SessionConfig};
use crate::time::{Duration, Instant};
use crate::types::Implementation;

mod closing;
mod harness;
mod legacy;
mod limits;
mod modern;
mod props;
mod ready_hold;
mod resume;
mod session_reset;
mod streamable;
mod tls;

use harness::*;
