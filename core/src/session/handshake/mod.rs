//! The handshake as a sub-machine: which handshake runs (`initialize`, or the 2026-07-28
//! `server/discover` and its per-request envelope), the wire id it waits on, its two
//! deadlines, and the era it settles on.
//!
//! [`Handshake`] owns that state and answers every "which era are we in" question the session
//! asks; its transitions take the fresh wire id from the session and return the request to
//! queue, so it never touches the session's queues itself. What the session does with an
//! answer lives beside it: [`initialize`] (the `initialize` exchange) and [`discover`] (the
//! discover exchange, the Auto probe, its fallback and version retries).

use super::config::{EraPolicy, KnownEra};
use super::envelope::Envelope;
use super::listen::DISCOVER_ONLY;
use super::outbound::Queued;
use super::{Era, ProtocolVersion, SessionConfig};
use crate::time::{Duration, Instant, saturating_add};

mod discover;
mod initialize;

pub(super) use discover::encode_discover;
pub(crate) use discover::{REMOVED_METHODS, supported_in};

/// How many `server/discover` attempts one handshake may make (version retries included).
const MAX_DISCOVER_ATTEMPTS: u8 = 3;

/// Which handshake runs (and, once it finished, which era the session speaks).
#[derive(Clone, Debug)]
enum Mode {
    /// `initialize`. `reprobe`: a failed handshake tries `server/discover` instead of closing
    /// (Auto with a remembered initialize era).
    Initialize { reprobe: bool },
    /// `server/discover` and the envelope. `fallback`: Auto, legacy signals lead to
    /// `initialize`. `tried`: versions already sent in a discover.
    Discover {
        fallback: bool,
        version: ProtocolVersion,
        attempts: u8,
        tried: Vec<ProtocolVersion>,
    },
}

impl Mode {
    fn discover(fallback: bool, version: ProtocolVersion) -> Mode {
        Mode::Discover {
            fallback,
            version,
            attempts: 1,
            tried: vec![version],
        }
    }
}

/// One of the handshake's deadlines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HandshakeTimer {
    /// The Auto probe gives up on `server/discover` and falls back to `initialize`.
    Probe,
    /// The whole handshake gives up: the session closes.
    Overall,
}

/// The handshake's state: owned by the session in one field, consulted for the era.
#[derive(Debug)]
pub(crate) struct Handshake {
    mode: Mode,
    /// The version `initialize` asks for (the configured one, or one a -32022 named).
    initialize_version: ProtocolVersion,
    /// The wire id of the current handshake request.
    wire: u64,
    /// Whether the handshake finished (the session is ready).
    done: bool,
    /// When the whole handshake gives up (armed at start and at each restart).
    deadline: Option<Instant>,
    /// When an Auto probe gives up on `server/discover`.
    probe_deadline: Option<Instant>,
    /// Whether the Auto probe fell back to `initialize`.
    fell_back: bool,
    /// The era the policy fixes before any answer (`None` for Auto).
    pinned: Option<Era>,
    /// The discover version configured (what the envelope carries in the initialize era).
    configured_discover: ProtocolVersion,
    /// The handshake timeout configured, for a restart.
    timeout: Option<Duration>,
    /// The envelope's per-session values (the discover era's handshake rides on every
    /// request).
    envelope: Envelope,
}

impl Handshake {
    /// The handshake a new session starts at `now`, with wire id 0; queue
    /// [`request`](Self::request).
    pub(crate) fn new(config: &SessionConfig, now: Instant) -> Handshake {
        let discover = |fallback| Mode::discover(fallback, config.discover_version);
        let (mode, probe, pinned) = match (config.era_policy, config.known_era) {
            (EraPolicy::Initialize, _) => (
                Mode::Initialize { reprobe: false },
                None,
                Some(Era::Initialize),
            ),
            (EraPolicy::Discover, _) => (discover(false), None, Some(Era::Discover)),
            (EraPolicy::Auto { .. }, Some(KnownEra::Initialize)) => {
                (Mode::Initialize { reprobe: true }, None, None)
            }
            // A server known to be modern: silence is not legacy evidence, but a legacy
            // answer still falls back (it was downgraded).
            (EraPolicy::Auto { .. }, Some(KnownEra::Discover)) => (discover(true), None, None),
            (EraPolicy::Auto { probe_timeout }, None) => {
                (discover(true), Some(probe_timeout), None)
            }
        };
        Handshake {
            mode,
            initialize_version: config.protocol_version,
            wire: 0,
            done: false,
            deadline: config.handshake_timeout.map(|t| saturating_add(now, t)),
            probe_deadline: probe.map(|t| saturating_add(now, t)),
            fell_back: false,
            pinned,
            configured_discover: config.discover_version,
            timeout: config.handshake_timeout,
            envelope: Envelope::new(config),
        }
    }

    // ---- the era ------------------------------------------------------------------------

    /// Whether the session speaks (or is probing) the discover era: requests carry the
    /// envelope, answers follow the `resultType` rules.
    pub(crate) fn is_discover(&self) -> bool {
        matches!(self.mode, Mode::Discover { .. })
    }

    /// Whether an Auto probe is running (its legacy signals still lead to `initialize`).
    pub(crate) fn is_probing(&self) -> bool {
        !self.done && matches!(self.mode, Mode::Discover { fallback: true, .. })
    }

    /// The era known for sure now: the one the handshake chose once it finished, before that
    /// the one the policy fixes (`None` while an Auto handshake runs).
    pub(crate) fn settled_era(&self) -> Option<Era> {
        if !self.done {
            return self.pinned;
        }
        Some(if self.is_discover() {
            Era::Discover
        } else {
            Era::Initialize
        })
    }

    /// The era that lacks `method`, when the era known now ([`settled_era`](Self::settled_era))
    /// does: the discover era has no `ping`, `logging/setLevel` or resource subscriptions, the
    /// initialize era no `subscriptions/listen`. `None` when the method exists there, or the
    /// era is not known yet.
    pub(crate) fn era_lacking(&self, method: &str) -> Option<Era> {
        let era = self.settled_era()?;
        let lacks = match era {
            Era::Discover => REMOVED_METHODS.contains(&method),
            Era::Initialize => DISCOVER_ONLY.contains(&method),
        };
        lacks.then_some(era)
    }

    /// Whether a request may go out with the envelope (so its params must be an object):
    /// under any era policy but `Initialize`.
    pub(crate) fn may_carry_envelope(&self) -> bool {
        self.pinned != Some(Era::Initialize)
    }

    /// Whether a `ping` issued during the handshake waits for it: `ping` may precede
    /// `initialize`, but the discover era has no `ping`, so there it waits for the era.
    pub(crate) fn ping_waits(&self) -> bool {
        self.is_discover()
    }

    /// The version the envelope carries.
    pub(crate) fn envelope_version(&self) -> ProtocolVersion {
        match &self.mode {
            Mode::Discover { version, .. } => *version,
            Mode::Initialize { .. } => self.configured_discover,
        }
    }

    /// Switches the discover era to `version` (a request's -32022 named it).
    pub(crate) fn set_envelope_version(&mut self, version: ProtocolVersion) {
        if let Mode::Discover { version: v, .. } = &mut self.mode {
            *v = version;
        }
    }

    /// The envelope's per-session values.
    pub(crate) fn envelope(&self) -> &Envelope {
        &self.envelope
    }

    /// The version `initialize` asks for.
    pub(crate) fn initialize_version(&self) -> ProtocolVersion {
        self.initialize_version
    }

    // ---- the exchange ------------------------------------------------------------------

    /// The wire id of the current handshake request: it changes whenever the handshake is
    /// re-issued (a fallback, a version retry, a re-probe, a restart).
    pub(crate) fn wire(&self) -> u64 {
        self.wire
    }

    /// Whether an answer with wire id `wire` is the handshake's (read by the session itself).
    pub(crate) fn awaits(&self, wire: u64) -> bool {
        !self.done && wire == self.wire
    }

    /// Whether the handshake is still running.
    pub(crate) fn is_running(&self) -> bool {
        !self.done
    }

    /// The request the handshake sends now (the one to queue at the start).
    pub(crate) fn request(&self) -> Queued {
        let wire = self.wire;
        if self.is_discover() {
            Queued::Discover { wire }
        } else {
            Queued::Initialize { wire }
        }
    }

    /// The handshake finished: its deadlines are disarmed.
    pub(crate) fn finish(&mut self) {
        self.done = true;
        self.deadline = None;
        self.probe_deadline = None;
    }

    /// Back to `initialize` under wire id `wire` (the server forgot the session: HTTP 404),
    /// with a fresh overall deadline from `now`. Returns the request to queue.
    pub(crate) fn restart(&mut self, now: Instant, wire: u64) -> Queued {
        self.done = false;
        self.wire = wire;
        self.deadline = self.timeout.map(|t| saturating_add(now, t));
        Queued::Initialize { wire }
    }

    /// Leaves the probe for `initialize` at `version` under wire id `wire` (the discover's
    /// id is forgotten, so a late answer to it is stale). Returns the request to queue.
    pub(crate) fn fall_back(&mut self, version: ProtocolVersion, wire: u64) -> Queued {
        self.mode = Mode::Initialize { reprobe: false };
        self.fell_back = true;
        self.probe_deadline = None;
        self.initialize_version = version;
        self.wire = wire;
        Queued::Initialize { wire }
    }

    /// Whether the handshake fell back from the probe to `initialize` and is still running
    /// (a server may answer the probe with an error and exit before it reads `initialize`).
    pub(crate) fn running_after_fallback(&self) -> bool {
        !self.done && self.fell_back
    }

    /// Auto with a remembered initialize era, and `initialize` failed: probe discover once
    /// under wire id `wire`. `None` (nothing changed) in any other mode.
    pub(crate) fn reprobe(&mut self, wire: u64) -> Option<Queued> {
        if !matches!(self.mode, Mode::Initialize { reprobe: true }) {
            return None;
        }
        self.mode = Mode::discover(false, self.configured_discover);
        self.wire = wire;
        Some(Queued::Discover { wire })
    }

    /// -32022 on the discover: try again at `version` under wire id `wire`, bounded. A list
    /// that names the version just sent gets one more try at it (the spec says to retry with
    /// a listed version; the rejection may have been about the request, not the version);
    /// the same rejection twice gives up. `Err` holds the versions tried, for the close
    /// (empty when the handshake is not a discover, which has nothing to retry).
    pub(crate) fn rediscover(
        &mut self,
        version: ProtocolVersion,
        wire: u64,
    ) -> Result<Queued, String> {
        let Mode::Discover {
            version: v,
            attempts,
            tried,
            ..
        } = &mut self.mode
        else {
            return Err(String::new());
        };
        if *attempts >= MAX_DISCOVER_ATTEMPTS || tried.iter().filter(|t| **t == version).count() > 1
        {
            let list = tried.iter().map(|v| v.as_str()).collect::<Vec<_>>();
            return Err(list.join(", "));
        }
        *attempts += 1;
        *v = version;
        tried.push(version);
        self.wire = wire;
        Ok(Queued::Discover { wire })
    }

    /// Whether legacy signals to the discover lead to `initialize` (`None` when the
    /// handshake is not a discover).
    fn falls_back(&self) -> Option<bool> {
        match self.mode {
            Mode::Discover { fallback, .. } => Some(fallback),
            Mode::Initialize { .. } => None,
        }
    }

    /// The versions a discover already tried.
    fn tried(&self) -> &[ProtocolVersion] {
        match &self.mode {
            Mode::Discover { tried, .. } => tried,
            Mode::Initialize { .. } => &[],
        }
    }

    // ---- deadlines ---------------------------------------------------------------------

    /// When `timer` fires, if it is armed (never once the handshake finished).
    pub(crate) fn deadline(&self, timer: HandshakeTimer) -> Option<Instant> {
        if self.done {
            return None;
        }
        match timer {
            HandshakeTimer::Probe => self.probe_deadline,
            HandshakeTimer::Overall => self.deadline,
        }
    }

    /// The probe deadline fired: it is disarmed (the session falls back).
    pub(crate) fn probe_fired(&mut self) {
        self.probe_deadline = None;
    }

    /// The handshake timeout configured (what a [`HandshakeTimer::Overall`] reports).
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Implementation;

    fn config(policy: EraPolicy) -> SessionConfig {
        SessionConfig::new(Implementation::new("t", "0"))
            .with_era_policy(policy)
            .with_handshake_timeout(Some(Duration::from_secs(10)))
    }

    fn auto() -> EraPolicy {
        EraPolicy::Auto {
            probe_timeout: Duration::from_secs(2),
        }
    }

    #[test]
    fn the_policy_pins_the_era_until_the_handshake_settles_it() {
        let t0 = Instant::now();
        let h = Handshake::new(&config(EraPolicy::Initialize), t0);
        assert_eq!(h.settled_era(), Some(Era::Initialize));
        assert_eq!(h.era_lacking("subscriptions/listen"), Some(Era::Initialize));
        assert_eq!(h.era_lacking("ping"), None);
        assert!(!h.may_carry_envelope());
        let h = Handshake::new(&config(EraPolicy::Discover), t0);
        assert_eq!(h.era_lacking("ping"), Some(Era::Discover));
        assert!(h.may_carry_envelope());
        // Auto knows nothing until it finishes, then what it chose.
        let mut h = Handshake::new(&config(auto()), t0);
        assert!(h.is_probing());
        assert_eq!(h.settled_era(), None);
        assert_eq!(h.era_lacking("ping"), None);
        assert!(matches!(h.request(), Queued::Discover { wire: 0 }));
        h.finish();
        assert!(!h.is_probing());
        assert_eq!(h.era_lacking("ping"), Some(Era::Discover));
    }

    #[test]
    fn deadlines_are_armed_while_running_and_the_fallback_disarms_the_probe() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut h = Handshake::new(&config(auto()), t0);
        assert_eq!(h.deadline(HandshakeTimer::Probe), Some(t0 + 2 * s));
        assert_eq!(h.deadline(HandshakeTimer::Overall), Some(t0 + 10 * s));
        let version = ProtocolVersion::INITIALIZE_ERA[0];
        assert!(matches!(
            h.fall_back(version, 7),
            Queued::Initialize { wire: 7 }
        ));
        assert!(h.awaits(7) && !h.awaits(0), "the probe's id is forgotten");
        assert_eq!(h.deadline(HandshakeTimer::Probe), None);
        assert!(h.running_after_fallback());
        assert_eq!(h.initialize_version(), version);
        h.finish();
        assert_eq!(h.deadline(HandshakeTimer::Overall), None);
        assert!(!h.awaits(7));
        // A restart re-arms the overall deadline from its instant, under a new id.
        assert!(matches!(
            h.restart(t0 + 60 * s, 9),
            Queued::Initialize { wire: 9 }
        ));
        assert_eq!(h.deadline(HandshakeTimer::Overall), Some(t0 + 70 * s));
        assert!(h.awaits(9));
    }

    #[test]
    fn version_retries_are_bounded() {
        let t0 = Instant::now();
        let mut h = Handshake::new(&config(EraPolicy::Discover), t0);
        let v = ProtocolVersion::DISCOVER_ERA[0];
        // The version just sent gets one more try; the same rejection again gives up.
        assert!(h.rediscover(v, 1).is_ok());
        assert_eq!(
            h.rediscover(v, 2).err(),
            Some(v.as_str().to_owned() + ", " + v.as_str())
        );
        assert!(h.awaits(1), "a refused retry leaves the exchange as it was");
        // Only a discover retries.
        let mut h = Handshake::new(&config(EraPolicy::Initialize), t0);
        assert!(h.rediscover(v, 1).is_err());
        assert!(
            h.reprobe(1).is_none(),
            "no re-probe without a remembered initialize era"
        );
    }
}
